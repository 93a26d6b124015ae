package io.kvbridge.sample.completions;

/**
 * The connection of the client whose request is being served, as far as the server can tell whether
 * the client is still there.
 *
 * <p>Thread-safe.
 */
public interface ClientConnection {

  /** Whether the client went away; checks the connection now rather than at the next poll. */
  boolean isGone();

  /**
   * Runs {@code action} once when the client goes away: at once, on the calling thread, if it
   * already has; otherwise on the thread that notices. Not run if the request ends first.
   */
  void onGone(Runnable action);

  /** A client that never goes away, for callers that serve no HTTP request. */
  static ClientConnection stays() {
    return new ClientConnection() {
      @Override
      public boolean isGone() {
        return false;
      }

      @Override
      public void onGone(Runnable action) {}
    };
  }
}
