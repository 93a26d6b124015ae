package io.kvbridge.runtime;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * The thread that moves a connector's transfers along between the engine's steps: every {@code
 * interval} while any transfer is in flight it runs one round of progress (which answers what
 * arrived and says whether anything is still in flight); when nothing is, it sleeps until {@link
 * #wake()} (a lease granted, a load begun) or {@link #IDLE_WAIT}, whichever comes first. A round
 * that throws is logged and the next one runs on time: one bad message must not stop every
 * transfer.
 *
 * <p>Threads: {@link #start()}, {@link #wake()} and {@link #stop()} may be called from any thread.
 */
final class ProgressThread {

  private static final System.Logger LOG = System.getLogger(ProgressThread.class.getName());

  /** The longest an idle connector's thread sleeps without being woken. */
  static final Duration IDLE_WAIT = Duration.ofMillis(100);

  private final Thread thread;
  private final long intervalNanos;
  private final BooleanSupplier round;
  private final AtomicBoolean started = new AtomicBoolean();
  private volatile boolean running = true;

  /**
   * A thread named for {@code engineId} that runs {@code round} (which answers whether anything is
   * still in flight) every {@code interval} while something is.
   */
  ProgressThread(String engineId, Duration interval, BooleanSupplier round) {
    this.intervalNanos = interval.toNanos();
    this.round = round;
    this.thread = new Thread(this::run, "kvbridge-progress-" + engineId);
    this.thread.setDaemon(true);
  }

  /** Starts the thread, once; later calls do nothing. */
  void start() {
    if (started.compareAndSet(false, true)) {
      thread.start();
    }
  }

  /** Runs the next round now rather than after an idle wait. */
  void wake() {
    LockSupport.unpark(thread);
  }

  /** Stops the thread and waits (up to a second) until its round in progress, if any, ended. */
  void stop() throws InterruptedException {
    running = false;
    LockSupport.unpark(thread);
    if (thread != Thread.currentThread() && thread.isAlive()) {
      thread.join(TimeUnit.SECONDS.toMillis(1));
    }
  }

  private void run() {
    boolean busy = true;
    while (running) {
      LockSupport.parkNanos(this, busy ? intervalNanos : IDLE_WAIT.toNanos());
      if (!running) {
        return;
      }
      try {
        busy = round.getAsBoolean();
      } catch (RuntimeException e) {
        LOG.log(Level.WARNING, thread.getName() + ": a round of progress failed; next round", e);
        busy = true;
      }
    }
  }
}
