package io.kvbridge.tck.schedule;

/** One step of a generated fault schedule; its {@code toString} is the reproduction. */
public sealed interface Op {

  /**
   * P prefills a prompt of {@code tokens} tokens (its last block partly filled unless the tokens
   * fill it); the router then drops or forwards it. D already holds the KV of the prompt's first
   * {@code localTokens} (a local prefix hit; all of them: it reads nothing).
   */
  record NewRequest(int tokens, int localTokens, boolean routerDrops, boolean abortedOnP)
      implements Op {}

  /**
   * P starts the prefill of a prompt of {@code tokens} tokens as a streamed lease, and the router
   * drops or forwards its parameters to D at once; P then computes its first {@code layersNow}
   * layers (each saved on every rank), the engines settling after each, and, {@code abortedOnP},
   * aborts it. Its other layers follow one per sweep interval of simulated time, as the forward
   * pass goes on.
   */
  record StreamedRequest(int tokens, int layersNow, boolean routerDrops, boolean abortedOnP)
      implements Op {}

  /**
   * Simulated time passes; the scheduled sweeps and heartbeats run on their intervals, and P
   * computes the next layer of every request it streams at each.
   */
  record Advance(int millis) implements Op {}

  /** The next {@code count} notifications vanish. */
  record DropNotifications(int count) implements Op {}

  /** The next {@code count} notifications are held until {@link ReleaseHeld}. */
  record HoldNotifications(int count) implements Op {}

  /** Held notifications are delivered, late. */
  record ReleaseHeld() implements Op {}

  /** The next {@code count} notifications reach their receiver {@code drains} drains late. */
  record DelayNotifications(int count, int drains) implements Op {}

  /** The next {@code count} notifications are delivered twice. */
  record DuplicateNotifications(int count) implements Op {}

  /**
   * The next READ on one link fails: D's rank {@code decoderRank} reading from the {@code
   * source}-th of the P ranks that hold its heads (in rank order). Both are taken modulo what the
   * {@link Shape} has, so the fault hits a link that carries reads in every shape.
   */
  record FailNextRead(int decoderRank, int source) implements Op {}

  /** The next READ on one link (as in {@link FailNextRead}) stalls until {@link Unstall}. */
  record StallNextRead(int decoderRank, int source) implements Op {}

  /** Stalled reads go on. */
  record Unstall() implements Op {}

  /** The decode engine dies, whatever it was doing; a fresh one takes its place. */
  record KillDecoder() implements Op {}

  /**
   * P's process ends and starts again under the same engine id, with a new incarnation and a fresh
   * pool: {@code graceful}, its connector is closed (its leases revoked); otherwise it is killed
   * (nothing of it runs again, its memory is simply gone). Its held blocks vanish with it.
   */
  record RestartProducer(boolean graceful) implements Op {}

  /**
   * D's process ends and starts again under the same engine id and agent name, with a new
   * incarnation and a fresh pool: {@code graceful}, its connector is closed; otherwise it is
   * killed. Its requests end with it.
   */
  record RestartDecoder(boolean graceful) implements Op {}

  /** D cancels one of the loads it waits for, whatever state it is in, and frees its blocks. */
  record AbortOnDecoder() implements Op {}

  /**
   * D restarts gracefully, and its first handshake with P takes {@code millis} of simulated time
   * (the clock runs on while P answers it).
   */
  record SlowHandshake(int millis) implements Op {}

  /**
   * P does not run for {@code millis} of simulated time: neither its engine steps nor its sweeps
   * run, so it processes no notification, while D's time goes on.
   */
  record SilentProducer(int millis) implements Op {}

  /** Someone sends P a completion for a live lease with a guessed token. */
  record ForgeCompletion() implements Op {}

  /** D replays the completion of a request it already finished. */
  record ReplayCompletion() implements Op {}

  /**
   * P prefills a request of three blocks, the last partly filled; the router hands D its genuine
   * token with a forged block list (variant 0: another held request's blocks, 1: blocks P does not
   * hold, 2: its own reversed, 3: shifted by one, 4: its first block three times) and checksums
   * that match those blocks.
   */
  record ForgeBlockList(int variant) implements Op {}

  /**
   * P prefills a request; the router hands its parameters to D with another prompt of the same
   * length, leaving the prompt digest as P wrote it or rewriting it to the other prompt's.
   */
  record RouteToAnotherPrompt(boolean digestRewritten) implements Op {}

  /**
   * A block of a held request is overwritten on one of P's ranks while its lease lives (a bug P
   * must survive).
   */
  record CorruptHeldBlock() implements Op {}

  /**
   * P prefills a request; the router hands D its parameters naming a producer that answers
   * handshakes at an address of its own with P's Accepted frame, altered: {@code stale} false,
   * under a new producer id with P's current metadata (its agents' names); true, under P's own id
   * as the start of P before the current one, with that start's metadata captured before it
   * restarted (as false while P has not restarted). D must refuse it before loading anything, and
   * the pair must serve the next request.
   */
  record ForgeProducer(boolean stale) implements Op {}

  /**
   * Someone replays to P the handshake request of the start of D before the current one, captured
   * before D restarted (nothing while D has not restarted under its engine id). P must refuse it,
   * and the pair must serve the next request.
   */
  record ReplayDecoderHandshake() implements Op {}
}
