package io.kvbridge.spring;

import io.kvbridge.spi.Availability;
import io.kvbridge.spi.ConnectorProperties;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.TransportProvider;
import io.kvbridge.transfer.Transport;

/**
 * Test provider of type {@code unavailable}: it cannot run, unless its property {@value #INSTALLED}
 * is {@code true}; it creates no transport either way.
 */
public final class UnavailableTransportProvider implements TransportProvider {

  /** The type name. */
  public static final String TYPE = "unavailable";

  /** The property that makes it available. */
  public static final String INSTALLED = "unavailable.installed";

  /** Why it cannot run. */
  public static final String REASON = "libtest.so is not installed (install it with the test kit)";

  @Override
  public String type() {
    return TYPE;
  }

  @Override
  public Availability availability(ConnectorProperties properties) {
    if (properties.bool(INSTALLED, false)) {
      return Availability.available();
    }
    return Availability.unavailable(
        REASON, new UnsatisfiedLinkError("no test in java.library.path"));
  }

  @Override
  public Transport create(ConnectorSettings settings, int rank) {
    throw new UnsupportedOperationException("the unavailable test provider creates nothing");
  }
}
