package io.kvbridge.sample.engine;

/** Where an engine is in its life; see {@link Engine#state()}. */
public sealed interface EngineState {

  /** Created, not yet started. */
  record NotStarted() implements EngineState {}

  /** The step loop runs and requests are served. */
  record Running() implements EngineState {}

  /**
   * The step loop died: every request fails at once with {@link EngineFailedException}; the
   * connector is closed, so the leases it held are revoked.
   *
   * @param reason what killed it, as the failed requests' message says
   */
  record Failed(String reason) implements EngineState {}

  /** Closed: requests fail with {@link EngineClosedException}. */
  record Closed() implements EngineState {}
}
