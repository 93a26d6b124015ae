package io.kvbridge.sample.engine;

/**
 * The engine's step loop died: something escaped a step that the loop cannot survive, such as
 * running out of memory. The engine serves no more requests; every request it held, and every later
 * one, fails with this. The message names the engine and the cause's message; the cause itself is
 * kept for the log.
 */
public class EngineFailedException extends IllegalStateException {

  private static final long serialVersionUID = 1L;

  /** Names the engine and what killed its step loop. */
  public EngineFailedException(String engineId, Throwable cause) {
    super(describe(engineId, cause), cause);
  }

  /** The message of the exception for {@code engineId} and {@code cause}. */
  static String describe(String engineId, Throwable cause) {
    String message = cause.getMessage();
    String reason =
        message == null || message.isBlank()
            ? "its step loop died without a message (the node's log has the details)"
            : "its step loop died: " + message;
    return "engine "
        + engineId
        + " has failed and serves no more requests: "
        + reason
        + "; restart the node";
  }
}
