package io.kvbridge.nixl;

import io.kvbridge.nixl.capi.NixlLibrary;
import io.kvbridge.spi.Availability;
import io.kvbridge.spi.ConnectorProperties;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.TransportProvider;
import io.kvbridge.transfer.Transport;

/**
 * The {@code nixl} connector: one {@link io.kvbridge.transfer.AgentCore} over a {@link NixlBackend}
 * (a NIXL agent) per engine, named after the engine id. Properties are described in {@link
 * NixlOptions}.
 *
 * <p>Available where NIXL's C API and the JNI glue load (see {@link NixlLibrary} for where they are
 * looked for); the reason it is not, with how to install NIXL, is what {@link #availability}
 * reports.
 */
public final class NixlTransportProvider implements TransportProvider {

  /** The connector type. */
  public static final String TYPE = "nixl";

  /** Creates the provider; {@link java.util.ServiceLoader} calls this. Loads nothing. */
  public NixlTransportProvider() {}

  @Override
  public String type() {
    return TYPE;
  }

  /**
   * Available where NIXL loads from the installation the properties (or the JVM's defaults) name,
   * and it is the one this process loaded, if it loaded one already; refuses an unknown or invalid
   * {@code nixl.*} property.
   */
  @Override
  public Availability availability(ConnectorProperties properties) {
    NixlOptions options = NixlOptions.fromProperties(properties);
    if (NixlLibrary.probe(options.library()) instanceof NixlLibrary.Failed failed) {
      return Availability.unavailable(failed.reason(), failed.cause().orElse(null));
    }
    return Availability.available();
  }

  @Override
  public Transport create(ConnectorSettings settings, int rank) {
    return NixlBackend.transport(
        TransportProvider.agentName(settings.engineId(), rank),
        NixlOptions.fromProperties(settings.properties()));
  }
}
