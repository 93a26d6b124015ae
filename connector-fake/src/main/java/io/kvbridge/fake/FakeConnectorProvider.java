package io.kvbridge.fake;

import io.kvbridge.protocol.PullConnector;
import io.kvbridge.spi.Availability;
import io.kvbridge.spi.ConnectorProvider;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.KvConnector;
import java.io.UncheckedIOException;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
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
 *   <li>{@value #SHARED_DIR}: a directory through which engines in separate processes on one
 *       machine reach each other ({@link FakeFabric#sharedDirectory}); excludes {@value #FABRIC}.
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

  /** The property naming the shared directory of a cross-process fabric. */
  public static final String SHARED_DIR = "fake.shared-dir";

  private static final List<String> KNOWN = List.of(FABRIC, SHARED_DIR);

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
    FakeFabric fabric = fabric(properties);
    FakeTransport transport = fabric.joinUnique(settings.engineId());
    try {
      return new PullConnector(settings, transport);
    } catch (RuntimeException e) {
      transport.close();
      throw e;
    }
  }

  private static FakeFabric fabric(Map<String, String> properties) {
    String dir = properties.get(SHARED_DIR);
    if (dir == null) {
      return FakeFabric.named(properties.getOrDefault(FABRIC, FakeFabric.DEFAULT_NAME));
    }
    if (properties.containsKey(FABRIC)) {
      throw new IllegalArgumentException(
          "set either " + FABRIC + " or " + SHARED_DIR + " for the fake connector, not both");
    }
    if (dir.isBlank()) {
      throw new IllegalArgumentException(SHARED_DIR + " must name a directory, got '" + dir + "'");
    }
    try {
      return FakeFabric.sharedDirectory(Path.of(dir));
    } catch (InvalidPathException | UncheckedIOException e) {
      throw new IllegalArgumentException(
          SHARED_DIR + "=" + dir + " is not a usable directory: " + e.getMessage(), e);
    }
  }
}
