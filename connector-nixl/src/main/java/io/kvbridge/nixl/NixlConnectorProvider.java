package io.kvbridge.nixl;

import io.kvbridge.nixl.capi.NixlLibrary;
import io.kvbridge.protocol.PullConnector;
import io.kvbridge.spi.Availability;
import io.kvbridge.spi.ConnectorProvider;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.ConnectorUnavailableException;
import io.kvbridge.spi.KvConnector;

/**
 * The {@code nixl} connector: the pull protocol over a {@link NixlTransport}, one NIXL agent per
 * engine, named after the engine id. Properties are described in {@link NixlOptions}.
 *
 * <p>Available where NIXL's C API and the JNI glue load (see {@link NixlLibrary} for where they are
 * looked for); the reason it is not, with how to install NIXL, is what {@link #availability()}
 * reports.
 */
public final class NixlConnectorProvider implements ConnectorProvider {

  /** The connector type. */
  public static final String TYPE = "nixl";

  /** Creates the provider; {@link java.util.ServiceLoader} calls this. Loads nothing. */
  public NixlConnectorProvider() {}

  @Override
  public String type() {
    return TYPE;
  }

  @Override
  public Availability availability() {
    if (NixlLibrary.probe() instanceof NixlLibrary.Failed failed) {
      return Availability.unavailable(failed.reason(), failed.cause().orElse(null));
    }
    return Availability.available();
  }

  @Override
  public KvConnector create(ConnectorSettings settings) {
    if (availability() instanceof Availability.Unavailable why) {
      throw new ConnectorUnavailableException(TYPE, why);
    }
    NixlOptions options = NixlOptions.fromProperties(settings.properties());
    NixlTransport transport = NixlTransport.create(settings.engineId(), options);
    try {
      return new PullConnector(settings, transport);
    } catch (RuntimeException e) {
      transport.close();
      throw e;
    }
  }
}
