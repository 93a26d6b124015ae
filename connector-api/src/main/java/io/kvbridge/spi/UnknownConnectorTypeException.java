package io.kvbridge.spi;

import java.util.Collection;

/** No provider on the class path has the requested type. */
public class UnknownConnectorTypeException extends IllegalArgumentException {

  private static final long serialVersionUID = 1L;

  /** Names the requested type and every type that is known. */
  public UnknownConnectorTypeException(String type, Collection<String> known) {
    super(
        "unknown connector type '"
            + type
            + "'; known types: "
            + String.join(", ", known)
            + " (a type is known when its provider's jar is on the class path)");
  }
}
