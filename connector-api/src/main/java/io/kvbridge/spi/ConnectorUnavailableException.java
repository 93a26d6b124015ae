package io.kvbridge.spi;

/** The selected connector cannot run on this machine; the message says why and how to fix it. */
public class ConnectorUnavailableException extends IllegalStateException {

  private static final long serialVersionUID = 1L;

  private final transient Availability.Unavailable why;

  /** Wraps the provider's reason and root cause. */
  public ConnectorUnavailableException(String type, Availability.Unavailable why) {
    super("connector '" + type + "' cannot run here: " + why.reason(), why.cause().orElse(null));
    this.why = why;
  }

  /** The provider's reason and root cause. */
  public Availability.Unavailable why() {
    return why;
  }
}
