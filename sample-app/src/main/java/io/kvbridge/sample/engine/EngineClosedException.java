package io.kvbridge.sample.engine;

/** The engine stopped before it could finish a request. */
public class EngineClosedException extends IllegalStateException {

  private static final long serialVersionUID = 1L;

  /** Names the engine. */
  public EngineClosedException(String engineId) {
    super("engine " + engineId + " is shut down; send the request to a running node");
  }
}
