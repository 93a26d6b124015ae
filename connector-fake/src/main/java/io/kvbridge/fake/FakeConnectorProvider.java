package io.kvbridge.fake;

import io.kvbridge.protocol.PullConnector;
import io.kvbridge.spi.Availability;
import io.kvbridge.spi.ConnectorProvider;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.KvConnector;
import java.util.List;
import java.util.Map;

/**
 * The {@code fake} connector: the pull protocol over a {@link FakeTransport}. Always available; it
 * needs nothing but the JVM.
 *
 * <p>Properties ({@link ConnectorSettings#properties()}):
 *
 * <ul>
 *   <li>{@value #FABRIC}: the name of the {@link FakeFabric} the agent joins (default {@value
 *       FakeFabric#DEFAULT_NAME}); engines reach each other only on one fabric, so tests isolate
 *       themselves by naming their own.
 * </ul>
 *
 * <p>The agent is named after the engine id, with a suffix if an agent of that name already lives
 * on the fabric.
 */
public final class FakeConnectorProvider implements ConnectorProvider {

  /** The connector type. */
  public static final String TYPE = "fake";

  /** The property naming the fabric. */
  public static final String FABRIC = "fake.fabric";

  private static final List<String> KNOWN = List.of(FABRIC);

  /** Creates the provider; {@link java.util.ServiceLoader} calls this. */
  public FakeConnectorProvider() {}

  @Override
  public String type() {
    return TYPE;
  }

  @Override
  public Availability availability() {
    return Availability.available();
  }

  @Override
  public KvConnector create(ConnectorSettings settings) {
    Map<String, String> properties = settings.properties();
    for (String key : properties.keySet()) {
      if (key.startsWith(TYPE + ".") && !KNOWN.contains(key)) {
        throw new IllegalArgumentException(
            "unknown property '" + key + "' for the fake connector; known: " + KNOWN);
      }
    }
    FakeFabric fabric = FakeFabric.named(properties.getOrDefault(FABRIC, FakeFabric.DEFAULT_NAME));
    FakeTransport transport = fabric.joinUnique(settings.engineId());
    try {
      return new PullConnector(settings, transport);
    } catch (RuntimeException e) {
      transport.close();
      throw e;
    }
  }
}
