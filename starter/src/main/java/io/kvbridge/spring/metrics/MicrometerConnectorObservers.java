package io.kvbridge.spring.metrics;

import io.kvbridge.observe.ConnectorObserver;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spring.ConnectorObserverFactory;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Gives every connector an observer that records its events in a {@link MeterRegistry}, tagged with
 * the connector's engine id. A connector created again for the same engine id shares that engine's
 * meters.
 *
 * <p>Meters (the README's operators' section says what each means, and its Prometheus name): {@code
 * kvbridge.leases.granted}, {@code kvbridge.leases.ended{reason}}, {@code
 * kvbridge.leases.age{reason}}, {@code kvbridge.leases.active}, {@code kvbridge.leases.blocks},
 * {@code kvbridge.transfer.duration}, {@code kvbridge.transfer.post.duration}, {@code
 * kvbridge.transfer.bytes}, {@code kvbridge.transfer.descriptors}, {@code
 * kvbridge.transfer.failures}, {@code kvbridge.notifications.failed{message}}, {@code
 * kvbridge.rejected{kind}}, {@code kvbridge.heartbeats{outcome}}, {@code
 * kvbridge.handshake.duration{outcome}}, {@code kvbridge.clock.offset{producer}}, {@code
 * kvbridge.clock.uncertainty{producer}}, and, where the transport measures its transfers (NIXL with
 * {@code kvbridge.nixl.telemetry=true}), {@code kvbridge.transport.post.duration}, {@code
 * kvbridge.transport.transfer.duration}, {@code kvbridge.transport.bytes} and {@code
 * kvbridge.transport.descriptors}; tag values are lower case ({@code expired}, {@code wrong_token},
 * {@code renewed}).
 *
 * <p>Thread-safe.
 */
public final class MicrometerConnectorObservers implements ConnectorObserverFactory {

  private final MeterRegistry registry;
  private final Map<String, MicrometerConnectorObserver> byEngine = new ConcurrentHashMap<>();

  /** Records into {@code registry}. */
  public MicrometerConnectorObservers(MeterRegistry registry) {
    this.registry = registry;
  }

  @Override
  public ConnectorObserver observerFor(ConnectorSettings settings) {
    return byEngine.computeIfAbsent(
        settings.engineId(), engineId -> new MicrometerConnectorObserver(registry, engineId));
  }
}
