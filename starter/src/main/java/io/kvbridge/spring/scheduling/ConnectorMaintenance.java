package io.kvbridge.spring.scheduling;

import io.kvbridge.spi.KvConnector;
import io.kvbridge.spring.KvConnectors;
import java.time.Duration;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

/**
 * Runs kvbridge's timers while the application runs: every sweep interval it sweeps every live
 * connector, so an idle engine still ends expired leases and frees their blocks; every heartbeat
 * interval it makes each consuming connector renew the leases it still means to read.
 *
 * <p>It owns its scheduler instead of relying on an application-wide one, so the application need
 * not enable scheduling. A connector that throws is logged and tried again on the next tick; it
 * never stops the schedule or the other connectors.
 *
 * <p>Threads: {@link #start()} and {@link #stop()} are called by the context; ticks run on the
 * scheduler's threads.
 */
public final class ConnectorMaintenance implements SmartLifecycle {

  /**
   * Starts before and stops after the embedded web server's lifecycle phases, so leases keep being
   * swept while requests drain.
   */
  public static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 4096;

  private static final Log logger = LogFactory.getLog(ConnectorMaintenance.class);

  private final KvConnectors connectors;
  private final Duration sweepInterval;
  private final Duration heartbeatInterval;
  private final Supplier<ThreadPoolTaskScheduler> schedulers;
  private final Object lock = new Object();
  private volatile ThreadPoolTaskScheduler running;

  /**
   * Creates the maintenance of {@code connectors}.
   *
   * @param schedulers makes an unstarted scheduler each time this lifecycle starts
   */
  public ConnectorMaintenance(
      KvConnectors connectors,
      Duration sweepInterval,
      Duration heartbeatInterval,
      Supplier<ThreadPoolTaskScheduler> schedulers) {
    this.connectors = connectors;
    this.sweepInterval = sweepInterval;
    this.heartbeatInterval = heartbeatInterval;
    this.schedulers = schedulers;
  }

  @Override
  public void start() {
    synchronized (lock) {
      if (running != null) {
        return;
      }
      ThreadPoolTaskScheduler scheduler = schedulers.get();
      scheduler.initialize();
      scheduler.scheduleWithFixedDelay(this::sweepAll, sweepInterval);
      scheduler.scheduleWithFixedDelay(this::sendHeartbeats, heartbeatInterval);
      running = scheduler;
    }
  }

  @Override
  public void stop() {
    synchronized (lock) {
      ThreadPoolTaskScheduler scheduler = running;
      if (scheduler != null) {
        running = null;
        scheduler.shutdown();
      }
    }
  }

  @Override
  public boolean isRunning() {
    return running != null;
  }

  @Override
  public int getPhase() {
    return PHASE;
  }

  /** Sweeps every live connector once. */
  public void sweepAll() {
    forEachConnector("sweep", connector -> connector.worker().sweep());
  }

  /** Makes every live consuming connector send its heartbeats once. */
  public void sendHeartbeats() {
    forEachConnector(
        "heartbeat",
        connector -> {
          if (connector.settings().role().consumes()) {
            connector.worker().sendHeartbeats();
          }
        });
  }

  private void forEachConnector(String what, Consumer<KvConnector> action) {
    for (KvConnector connector : connectors.all()) {
      try {
        action.accept(connector);
      } catch (RuntimeException e) {
        logger.warn(
            "The scheduled "
                + what
                + " of engine "
                + connector.settings().engineId()
                + " failed; it is tried again on the next tick",
            e);
      }
    }
  }
}
