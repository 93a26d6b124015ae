package io.kvbridge.spring;

import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.ConnectorStatus;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.SchedulerSide;
import io.kvbridge.spi.WorkerSide;
import java.util.function.Consumer;

/**
 * A connector handed out by {@link DefaultKvConnectors}: behaves exactly like the provider's
 * connector and tells its owner when it is closed, so {@link KvConnectors#all()} lists only live
 * ones.
 */
final class TrackedKvConnector implements KvConnector {

  private final KvConnector delegate;
  private final Consumer<TrackedKvConnector> onClose;

  TrackedKvConnector(KvConnector delegate, Consumer<TrackedKvConnector> onClose) {
    this.delegate = delegate;
    this.onClose = onClose;
  }

  @Override
  public ConnectorSettings settings() {
    return delegate.settings();
  }

  @Override
  public SchedulerSide scheduler() {
    return delegate.scheduler();
  }

  @Override
  public WorkerSide worker(int rank) {
    return delegate.worker(rank);
  }

  @Override
  public void peerGone(String engineId, String why) {
    delegate.peerGone(engineId, why);
  }

  @Override
  public ConnectorStatus status() {
    return delegate.status();
  }

  @Override
  public void close() {
    try {
      delegate.close();
    } finally {
      onClose.accept(this);
    }
  }

  @Override
  public String toString() {
    return delegate.toString();
  }
}
