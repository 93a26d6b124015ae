package io.kvbridge.spring;

import io.kvbridge.spi.InvalidSettingException;

/**
 * A {@code kvbridge.*} property holds a value kvbridge cannot run with. The message names the
 * property, the value and what is accepted; start-up stops with it.
 */
public class InvalidKvBridgePropertyException extends IllegalArgumentException {

  private static final long serialVersionUID = 1L;

  private final String property;

  /**
   * Creates the exception.
   *
   * @param property the full property name, e.g. {@code kvbridge.lease.duration}
   * @param message what is wrong and what is accepted, starting with the property name
   */
  public InvalidKvBridgePropertyException(String property, String message) {
    this(property, message, null);
  }

  /** Creates the exception with the failure that revealed the problem. */
  public InvalidKvBridgePropertyException(String property, String message, Throwable cause) {
    super(message, cause);
    this.property = property;
  }

  /**
   * {@code e} reported under the property's full name: {@code kvbridge.} followed by the setting.
   */
  public static InvalidKvBridgePropertyException of(InvalidSettingException e) {
    String property = "kvbridge." + e.setting();
    return new InvalidKvBridgePropertyException(property, property + " " + e.problem(), e);
  }

  /** The full name of the offending property, e.g. {@code kvbridge.lease.duration}. */
  public String property() {
    return property;
  }
}
