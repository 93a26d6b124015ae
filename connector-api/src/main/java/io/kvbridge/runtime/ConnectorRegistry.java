package io.kvbridge.runtime;

import io.kvbridge.spi.Availability;
import io.kvbridge.spi.ConnectorProperties;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.ConnectorUnavailableException;
import io.kvbridge.spi.InvalidSettingException;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.TransportProvider;
import io.kvbridge.spi.UnknownConnectorTypeException;
import io.kvbridge.transfer.Transport;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.ServiceLoader;
import java.util.TreeMap;
import java.util.function.UnaryOperator;

/**
 * The connector types found on a class path, and the one place connectors are built: a type's
 * {@link TransportProvider} creates the transport, and this registry wraps it in the {@link
 * PullConnector} every type shares.
 *
 * <p>Immutable once loaded; safe for use from any thread.
 */
public final class ConnectorRegistry {

  private final Map<String, TransportProvider> byType;

  private ConnectorRegistry(Map<String, TransportProvider> byType) {
    this.byType = Collections.unmodifiableMap(byType);
  }

  /** Discovers providers with {@link ServiceLoader} through {@code classLoader}. */
  public static ConnectorRegistry load(ClassLoader classLoader) {
    return of(
        ServiceLoader.load(TransportProvider.class, classLoader).stream()
            .map(ServiceLoader.Provider::get)
            .toList());
  }

  /**
   * A registry over the given providers.
   *
   * @throws IllegalStateException if two providers claim the same type
   */
  public static ConnectorRegistry of(List<TransportProvider> providers) {
    Map<String, TransportProvider> byType = new TreeMap<>();
    for (TransportProvider provider : providers) {
      TransportProvider clash = byType.putIfAbsent(provider.type(), provider);
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
   * The provider of {@code type}, checked to be able to run on this machine with {@code
   * properties}.
   *
   * @throws UnknownConnectorTypeException listing the known types if there is none
   * @throws InvalidSettingException if the provider refuses one of its properties
   * @throws ConnectorUnavailableException with the provider's reason and root cause if it cannot
   *     run here
   */
  public TransportProvider require(String type, ConnectorProperties properties) {
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(properties, "properties");
    TransportProvider provider = byType.get(type);
    if (provider == null) {
      throw new UnknownConnectorTypeException(type, byType.keySet());
    }
    if (provider.availability(properties) instanceof Availability.Unavailable why) {
      throw new ConnectorUnavailableException(type, why);
    }
    return provider;
  }

  /**
   * Creates the connector of one engine: {@code settings.type()}'s transport inside the pull
   * protocol.
   *
   * @throws UnknownConnectorTypeException if the type is unknown
   * @throws InvalidSettingException if the provider refuses one of its properties
   * @throws ConnectorUnavailableException if the type cannot run here
   */
  public KvConnector create(ConnectorSettings settings) {
    return create(settings, UnaryOperator.identity());
  }

  /**
   * Creates the connector of one engine with each rank's transport wrapped by {@code decorator}
   * (e.g. to inject faults or trace transfers); the connector owns and closes what the decorator
   * returns.
   */
  public KvConnector create(ConnectorSettings settings, UnaryOperator<Transport> decorator) {
    TransportProvider provider = require(settings.type(), settings.properties());
    List<Transport> transports = new ArrayList<>();
    try {
      for (int rank = 0; rank < settings.tpDegree(); rank++) {
        transports.add(decorator.apply(provider.create(settings, rank)));
      }
      return new PullConnector(settings, transports);
    } catch (RuntimeException e) {
      transports.forEach(Transport::close);
      throw e;
    }
  }
}
