package io.kvbridge.spi;

/**
 * A connector-specific property is unknown, malformed or out of range. The message names the
 * property, the value and what is accepted; {@link #property()} lets a framework translate the name
 * into its own (the starter reports {@code kvbridge.<property>}).
 */
public class InvalidConnectorPropertyException extends IllegalArgumentException {

  private static final long serialVersionUID = 1L;

  private final String property;

  /** A refusal of {@code property}, explained by {@code message}. */
  public InvalidConnectorPropertyException(String property, String message) {
    super(message);
    this.property = property;
  }

  /** The property as the connector knows it, e.g. {@code nixl.memory}. */
  public String property() {
    return property;
  }
}
