package io.kvbridge.spi;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.ServiceLoader;
import java.util.TreeMap;

/**
 * The connector providers found on a class path, by type.
 *
 * <p>Immutable once loaded; safe for use from any thread.
 */
public final class ConnectorRegistry {

  private final Map<String, ConnectorProvider> byType;

  private ConnectorRegistry(Map<String, ConnectorProvider> byType) {
    this.byType = Collections.unmodifiableMap(byType);
  }

  /** Discovers providers with {@link ServiceLoader} through {@code classLoader}. */
  public static ConnectorRegistry load(ClassLoader classLoader) {
    return of(
        ServiceLoader.load(ConnectorProvider.class, classLoader).stream()
            .map(ServiceLoader.Provider::get)
            .toList());
  }

  /**
   * A registry over the given providers.
   *
   * @throws IllegalStateException if two providers claim the same type
   */
  public static ConnectorRegistry of(List<ConnectorProvider> providers) {
    Map<String, ConnectorProvider> byType = new TreeMap<>();
    for (ConnectorProvider provider : providers) {
      ConnectorProvider clash = byType.putIfAbsent(provider.type(), provider);
      if (clash != null) {
        throw new IllegalStateException(
            "two connector providers claim type '"
                + provider.type()
                + "': "
                + clash.getClass().getName()
                + " and "
                + provider.getClass().getName());
      }
    }
    return new ConnectorRegistry(byType);
  }

  /** The known types, sorted. */
  public List<String> types() {
    return List.copyOf(byType.keySet());
  }

  /**
   * The provider of {@code type}.
   *
   * @throws UnknownConnectorTypeException listing the known types if there is none
   */
  public ConnectorProvider provider(String type) {
    Objects.requireNonNull(type, "type");
    ConnectorProvider provider = byType.get(type);
    if (provider == null) {
      throw new UnknownConnectorTypeException(type, byType.keySet());
    }
    return provider;
  }

  /**
   * Creates a connector of {@code settings.type()} after checking it can run here.
   *
   * @throws UnknownConnectorTypeException if the type is unknown
   * @throws ConnectorUnavailableException if the provider says it cannot run here
   */
  public KvConnector create(ConnectorSettings settings) {
    ConnectorProvider provider = provider(settings.type());
    if (provider.availability() instanceof Availability.Unavailable why) {
      throw new ConnectorUnavailableException(settings.type(), why);
    }
    return provider.create(settings);
  }
}
