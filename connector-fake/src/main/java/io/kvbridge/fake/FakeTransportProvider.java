package io.kvbridge.fake;

import io.kvbridge.spi.Availability;
import io.kvbridge.spi.ConnectorProperties;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.InvalidSettingException;
import io.kvbridge.spi.TransportProvider;
import io.kvbridge.transfer.Transport;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * The {@code fake} connector: an agent of a {@link FakeFabric} per engine. Always available; it
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
public final class FakeTransportProvider implements TransportProvider {

  /** The connector type. */
  public static final String TYPE = "fake";

  /** The property naming the fabric. */
  public static final String FABRIC = "fake.fabric";

  /** The property naming the shared directory of a cross-process fabric. */
  public static final String SHARED_DIR = "fake.shared-dir";

  /** Creates the provider; {@link java.util.ServiceLoader} calls this. */
  public FakeTransportProvider() {}

  @Override
  public String type() {
    return TYPE;
  }

  /** Always available; refuses an unknown or invalid {@code fake.*} property. */
  @Override
  public Availability availability(ConnectorProperties properties) {
    FabricChoice.of(properties);
    return Availability.available();
  }

  @Override
  public Transport create(ConnectorSettings settings, int rank) {
    return FabricChoice.of(settings.properties())
        .open()
        .joinUnique(TransportProvider.agentName(settings.engineId(), rank));
  }

  /** The fabric the properties name: a shared directory, or an in-JVM fabric by name. */
  private record FabricChoice(Optional<Path> sharedDir, String name) {

    static FabricChoice of(ConnectorProperties properties) {
      properties.requireOnlyKnown(TYPE + ".", List.of(FABRIC, SHARED_DIR));
      Optional<Path> dir = properties.path(SHARED_DIR);
      if (dir.isPresent() && properties.string(FABRIC).isPresent()) {
        throw new InvalidSettingException(
            FABRIC, "cannot be set together with " + SHARED_DIR + "; set one of them, not both");
      }
      return new FabricChoice(dir, properties.string(FABRIC, FakeFabric.DEFAULT_NAME));
    }

    FakeFabric open() {
      if (sharedDir.isEmpty()) {
        return FakeFabric.named(name);
      }
      try {
        return FakeFabric.sharedDirectory(sharedDir.get());
      } catch (UncheckedIOException e) {
        throw new InvalidSettingException(
            SHARED_DIR,
            "'" + sharedDir.get() + "' is not a usable directory: " + e.getMessage(),
            e);
      }
    }
  }
}
