package io.kvbridge.spring;

import io.kvbridge.spi.Availability;
import io.kvbridge.spi.ConnectorProperties;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.ConnectorUnavailableException;
import io.kvbridge.spi.TransportProvider;
import io.kvbridge.transfer.Transport;

/** Test provider of type {@code unavailable}: it can never run. */
public final class UnavailableTransportProvider implements TransportProvider {

  /** The type name. */
  public static final String TYPE = "unavailable";

  /** Why it cannot run. */
  public static final String REASON = "libtest.so is not installed (install it with the test kit)";

  @Override
  public String type() {
    return TYPE;
  }

  @Override
  public Availability availability(ConnectorProperties properties) {
    return Availability.unavailable(
        REASON, new UnsatisfiedLinkError("no test in java.library.path"));
  }

  @Override
  public Transport create(ConnectorSettings settings) {
    throw new ConnectorUnavailableException(
        TYPE, (Availability.Unavailable) availability(settings.properties()));
  }
}
