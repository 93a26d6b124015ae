package io.kvbridge.nixl.capi;

/** NIXL's native library cannot be loaded here; the message says why and how to install it. */
public class NixlUnavailableException extends IllegalStateException {

  private static final long serialVersionUID = 1L;

  /** Creates an exception with the reason and the root failure, if any. */
  public NixlUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
