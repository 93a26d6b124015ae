package io.kvbridge.spring.scheduling;

import io.kvbridge.spi.KvConnector;
import io.kvbridge.spring.KvConnectors;
import java.time.Duration;
import java.util.function.Supplier;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

/**
 * Runs kvbridge's timer while the application runs: every tick it sweeps every live connector, so
 * an idle engine still ends expired leases and frees their blocks, and a consuming connector sends
 * the heartbeats that are due (the connector keeps its own heartbeat interval; the tick is the
 * shorter of {@code kvbridge.lease.sweep-interval} and {@code kvbridge.lease.heartbeat-interval},
 * so no heartbeat is late by more than one tick).
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
  private final Duration tick;
  private final Supplier<ThreadPoolTaskScheduler> schedulers;
  private final Object lock = new Object();
  private volatile ThreadPoolTaskScheduler running;

  /**
   * Creates the maintenance of {@code connectors}.
   *
   * @param tick how often every connector is swept
   * @param schedulers makes an unstarted scheduler each time this lifecycle starts
   */
  public ConnectorMaintenance(
      KvConnectors connectors, Duration tick, Supplier<ThreadPoolTaskScheduler> schedulers) {
    this.connectors = connectors;
    this.tick = tick;
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
      scheduler.scheduleWithFixedDelay(this::sweepAll, tick);
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
    for (KvConnector connector : connectors.all()) {
      try {
        connector.worker().sweep();
      } catch (RuntimeException e) {
        logger.warn(
            "The scheduled sweep of engine "
                + connector.settings().engineId()
                + " failed; it is tried again on the next tick",
            e);
      }
    }
  }
}
