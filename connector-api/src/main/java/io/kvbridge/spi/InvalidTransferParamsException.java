package io.kvbridge.spi;

/** Transfer parameters from an untrusted source are missing a field, out of range or malformed. */
public class InvalidTransferParamsException extends IllegalArgumentException {

  private static final long serialVersionUID = 1L;

  /** Names the field and what was wrong with it. */
  public InvalidTransferParamsException(String message) {
    super("invalid kv_transfer_params: " + message);
  }
}
