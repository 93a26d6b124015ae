package io.kvbridge.wire;

/**
 * A handshake frame did not prove knowledge of the deployment's secret (a proof that does not
 * verify, a sealed frame that does not open, or one sent unsealed), or one side requires
 * authentication the other does not offer. Nothing from the frame is used.
 */
public class HandshakeAuthenticationException extends MalformedMessageException {

  private static final long serialVersionUID = 1L;

  /** Says what was missing or wrong, never the secret. */
  public HandshakeAuthenticationException(String message) {
    super(message);
  }
}
