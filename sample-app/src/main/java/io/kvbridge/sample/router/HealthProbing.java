package io.kvbridge.sample.router;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Probes every node of a router every interval, on a thread of its own, the first time one interval
 * after start: until then every node counts as healthy. A round of probes ends before the next
 * starts.
 *
 * <p>Thread-safe.
 */
public final class HealthProbing implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(HealthProbing.class);

  private final ScheduledExecutorService probes;

  /** Starts probing {@code router}'s nodes every {@code interval}. */
  public HealthProbing(PdRouter router, Duration interval) {
    this.probes =
        Executors.newSingleThreadScheduledExecutor(
            task -> {
              Thread thread = new Thread(task, "router-health-probes");
              thread.setDaemon(true);
              return thread;
            });
    long nanos = interval.toNanos();
    probes.scheduleWithFixedDelay(
        () -> {
          try {
            router.probe().join();
          } catch (RuntimeException e) {
            LOG.warn("probing the router's nodes failed", e);
          }
        },
        nanos,
        nanos,
        TimeUnit.NANOSECONDS);
  }

  /** Stops probing. */
  @Override
  public void close() {
    probes.shutdownNow();
  }
}
