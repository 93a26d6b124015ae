package io.kvbridge.spring.actuate;

import io.kvbridge.discovery.etcd.DiscoveryStatus;
import io.kvbridge.discovery.etcd.EtcdDiscovery;
import java.net.URI;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * Health of discovery on etcd ({@code kvbridgeEtcd}): UP when etcd answers and every engine of this
 * application that can be registered is; OUT_OF_SERVICE with the reason otherwise (etcd is
 * unreachable, or an engine is not registered yet), with each engine's registration and how many
 * engines this process knows.
 *
 * <p>OUT_OF_SERVICE, not DOWN: the engine itself still works (it keeps serving with the peers it
 * knows, and frees nothing because etcd went away), it is only out of the fleet's view. So a
 * failure of the engine itself, reported DOWN by the {@code kvbridge} indicator, still shows above
 * it, and a liveness probe never restarts engines because etcd is away. The application's overall
 * status does become OUT_OF_SERVICE; a readiness group that should ignore discovery leaves {@code
 * kvbridgeEtcd} out.
 */
public class EtcdDiscoveryHealthIndicator extends AbstractHealthIndicator {

  private final EtcdDiscovery discovery;

  /** Reports on {@code discovery}. */
  public EtcdDiscoveryHealthIndicator(EtcdDiscovery discovery) {
    super("kvbridge etcd health check failed");
    this.discovery = discovery;
  }

  @Override
  protected void doHealthCheck(Health.Builder builder) {
    DiscoveryStatus status = discovery.status();
    Map<String, String> engines = new LinkedHashMap<>();
    status
        .registrations()
        .forEach((id, state) -> engines.put(id, state.name().toLowerCase(Locale.ROOT)));
    builder
        .withDetail("endpoints", status.endpoints().stream().map(URI::toString).toList())
        .withDetail("connected", status.connected())
        .withDetail("registrations", engines)
        .withDetail("knownEngines", status.knownEngines());
    if (status.problem().isPresent()) {
      builder.outOfService().withDetail("reason", status.problem().get());
    } else {
      builder.up();
    }
  }
}
