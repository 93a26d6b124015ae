package io.kvbridge.spi;

/** The selected connector cannot run on this machine; the message says why and how to fix it. */
public class ConnectorUnavailableException extends IllegalStateException {

  private static final long serialVersionUID = 1L;

  /** Wraps the provider's reason and root cause. */
  public ConnectorUnavailableException(String type, Availability.Unavailable why) {
    super("connector '" + type + "' cannot run here: " + why.reason(), why.cause().orElse(null));
  }
}
