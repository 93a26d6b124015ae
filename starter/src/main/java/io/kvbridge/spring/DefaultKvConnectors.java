package io.kvbridge.spring;

import io.kvbridge.observe.CompositeConnectorObserver;
import io.kvbridge.observe.ConnectorObserver;
import io.kvbridge.observe.TransferTracer;
import io.kvbridge.runtime.ConnectorRegistry;
import io.kvbridge.spi.Availability;
import io.kvbridge.spi.ConnectorListener;
import io.kvbridge.spi.ConnectorProperties;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.ConnectorUnavailableException;
import io.kvbridge.spi.InvalidSettingException;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.Role;
import io.kvbridge.spi.TransportProvider;
import io.kvbridge.spi.UnknownConnectorTypeException;
import io.kvbridge.time.MonotonicClock;
import io.kvbridge.transfer.Transport;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.UnaryOperator;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.ObjectProvider;

/**
 * The {@link KvConnectors} of an application context: checks the configured settings and selects
 * the provider when it is created (so an invalid setting, or an unknown or unusable connector type,
 * stops start-up, reported under its {@code kvbridge.} name), creates connectors with the
 * configured settings, every {@link ConnectorObserverFactory}'s observer, the {@link
 * ConnectorTracerFactory}'s tracer and every {@link TransportDecorator}'s wrapper, registers them
 * with the {@link PeerDiscovery} (whose directory their settings name), and closes the connectors
 * still open when the context closes.
 *
 * <p>Thread-safe: creation and shutdown are serialized by one lock; {@link #all()} reads a
 * copy-on-write list.
 */
final class DefaultKvConnectors implements KvConnectors, DisposableBean {

  private static final Log logger = LogFactory.getLog(DefaultKvConnectors.class);

  private final KvBridgeProperties properties;
  private final ConnectorRegistry registry;
  private final ConnectorProperties connectorProperties;
  private final TransportProvider provider;
  private final MonotonicClock clock;
  private final PeerDiscovery discovery;
  private final ObjectProvider<ConnectorObserverFactory> observerFactories;
  private final ObjectProvider<ConnectorTracerFactory> tracerFactory;
  private final ObjectProvider<TransportDecorator> transportDecorators;
  private final List<KvConnector> live = new CopyOnWriteArrayList<>();
  private final Object lock = new Object();
  private boolean closed;

  /**
   * Checks the configured engine's settings and selects the provider of {@code
   * kvbridge.connector.type}, checked to run here with {@code connectorProperties}.
   *
   * @throws InvalidKvBridgePropertyException if a setting is invalid, no provider has that type or
   *     the provider refuses one of its properties
   * @throws ConnectorUnavailableException if the provider cannot run on this machine
   */
  DefaultKvConnectors(
      KvBridgeProperties properties,
      ConnectorProperties connectorProperties,
      ConnectorRegistry registry,
      MonotonicClock clock,
      PeerDiscovery discovery,
      ObjectProvider<ConnectorObserverFactory> observerFactories,
      ObjectProvider<ConnectorTracerFactory> tracerFactory,
      ObjectProvider<TransportDecorator> transportDecorators) {
    this.properties = properties;
    this.connectorProperties = connectorProperties;
    this.clock = clock;
    this.discovery = discovery;
    // The configured engine's settings, built now so an invalid value stops start-up.
    settings(properties.engineId(), properties.role(), properties.tpDegree());
    this.registry = registry;
    this.provider = select(registry, properties.connector().type(), connectorProperties);
    this.observerFactories = observerFactories;
    this.tracerFactory = tracerFactory;
    this.transportDecorators = transportDecorators;
  }

  /**
   * The settings of a connector for {@code engineId} in {@code role} with {@code tpDegree} ranks,
   * with every other value as configured.
   *
   * @throws InvalidKvBridgePropertyException naming the {@code kvbridge.*} property of a value
   *     {@link ConnectorSettings} refuses
   */
  private ConnectorSettings settings(String engineId, Role role, int tpDegree) {
    try {
      return properties.connectorSettings(
          engineId,
          role,
          tpDegree,
          discovery.directory(),
          clock,
          ConnectorObserver.NONE,
          connectorProperties);
    } catch (InvalidSettingException e) {
      throw InvalidKvBridgePropertyException.of(e);
    }
  }

  private static TransportProvider select(
      ConnectorRegistry registry, String type, ConnectorProperties connectorProperties) {
    try {
      return registry.require(type, connectorProperties);
    } catch (UnknownConnectorTypeException e) {
      throw new InvalidKvBridgePropertyException(
          "kvbridge.connector.type",
          "kvbridge.connector.type '"
              + type
              + "' is unknown; known types: "
              + knownTypes(registry)
              + " (a type is known when its connector's jar is on the class path)",
          e);
    } catch (InvalidSettingException e) {
      throw InvalidKvBridgePropertyException.of(e);
    } catch (ConnectorUnavailableException e) {
      Availability.Unavailable why = e.why();
      throw new ConnectorUnavailableException(
          type,
          new Availability.Unavailable(
              why.reason()
                  + "; make it available on this machine or set kvbridge.connector.type to"
                  + " another type (known types: "
                  + knownTypes(registry)
                  + ")",
              why.cause()));
    }
  }

  private static String knownTypes(ConnectorRegistry registry) {
    return registry.types().isEmpty() ? "none" : String.join(", ", registry.types());
  }

  @Override
  public TransportProvider provider() {
    return provider;
  }

  @Override
  public Availability availability() {
    return provider.availability(connectorProperties);
  }

  @Override
  public KvConnector create() {
    return create(properties.engineId(), properties.role());
  }

  /**
   * {@inheritDoc}
   *
   * @throws IllegalStateException if a live connector already has {@code engineId}, or the
   *     application context is closing
   */
  @Override
  public KvConnector create(String engineId, Role role) {
    return create(engineId, role, properties.tpDegree());
  }

  /**
   * {@inheritDoc}
   *
   * @throws IllegalStateException if a live connector already has {@code engineId}, or the
   *     application context is closing
   */
  @Override
  public KvConnector create(String engineId, Role role, int tpDegree) {
    // The caller's own value, not a kvbridge.* property: refused here, not reported as one.
    if (tpDegree < 1 || tpDegree > 255) {
      throw new IllegalArgumentException(
          "engine " + engineId + ": an engine has 1 to 255 tensor-parallel ranks, got " + tpDegree);
    }
    synchronized (lock) {
      if (closed) {
        throw new IllegalStateException(
            "cannot create a connector for engine "
                + engineId
                + ": the application context is closing");
      }
      for (KvConnector existing : live) {
        if (existing.settings().engineId().equals(engineId)) {
          throw new IllegalStateException(
              "engine id '"
                  + engineId
                  + "' already has a live connector in this application; engine ids must be"
                  + " unique, close the other connector first or choose another id");
        }
      }
      ConnectorSettings base = settings(engineId, role, tpDegree);
      List<ConnectorObserver> observers = new ArrayList<>();
      observerFactories.orderedStream().forEach(f -> observers.add(f.observerFor(base)));
      TransferTracer tracer =
          tracerFactory.getIfUnique(() -> s -> TransferTracer.NONE).tracerFor(base);
      ConnectorSettings settings =
          base.withObserver(CompositeConnectorObserver.of(observers)).withTracer(tracer);
      List<TransportDecorator> decorators = transportDecorators.orderedStream().toList();
      UnaryOperator<Transport> decorate =
          raw -> {
            Transport transport = raw;
            for (TransportDecorator decorator : decorators) {
              transport = decorator.decorate(transport, settings);
            }
            return transport;
          };
      KvConnector created;
      try {
        created = registry.create(settings, decorate);
      } catch (InvalidSettingException e) {
        throw InvalidKvBridgePropertyException.of(e);
      }
      KvConnector connector;
      try {
        connector = discovery.register(created);
      } catch (RuntimeException e) {
        created.close();
        throw e;
      }
      connector.listen(
          new ConnectorListener() {
            @Override
            public void closed() {
              live.remove(connector);
            }
          });
      live.add(connector);
      logger.info(
          "Created a "
              + settings.type()
              + " connector for engine "
              + engineId
              + " ("
              + role.name().toLowerCase(Locale.ROOT)
              + ")");
      return connector;
    }
  }

  @Override
  public List<KvConnector> all() {
    return List.copyOf(live);
  }

  /** Closes every connector still open, newest first; one failing does not stop the others. */
  @Override
  public void destroy() {
    List<KvConnector> open;
    synchronized (lock) {
      closed = true;
      open = new ArrayList<>(live);
    }
    Collections.reverse(open);
    for (KvConnector connector : open) {
      try {
        connector.close();
      } catch (RuntimeException e) {
        logger.warn(
            "Closing the connector of engine " + connector.settings().engineId() + " failed", e);
      }
    }
  }
}
