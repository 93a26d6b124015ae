package io.kvbridge.discovery.etcd;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.ConnectorStatus;
import io.kvbridge.spi.FinishedTransfers;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.SchedulerSide;
import io.kvbridge.spi.StepMetadata;
import io.kvbridge.spi.WorkerSide;
import io.kvbridge.transfer.KvMemory;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * A connector registered in etcd: behaves exactly like the connector it wraps, registers the engine
 * once its KV cache is registered (from then on it answers handshakes and its layout is known), and
 * removes the registration before it closes.
 */
final class RegisteredConnector implements KvConnector {

  private final KvConnector delegate;
  private final Registration registration;
  private final EtcdDiscovery discovery;
  private final List<WorkerSide> workers;

  RegisteredConnector(KvConnector delegate, Registration registration, EtcdDiscovery discovery) {
    this.delegate = delegate;
    this.registration = registration;
    this.discovery = discovery;
    List<WorkerSide> all = new ArrayList<>();
    for (int rank = 0; rank < delegate.settings().tpDegree(); rank++) {
      all.add(new RegisteringWorker(delegate.worker(rank)));
    }
    this.workers = List.copyOf(all);
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
    if (rank < 0 || rank >= workers.size()) {
      return delegate.worker(rank); // the delegate names the valid ranks
    }
    return workers.get(rank);
  }

  @Override
  public void peerGone(String engineId, String why) {
    delegate.peerGone(engineId, why);
  }

  @Override
  public ConnectorStatus status() {
    return delegate.status();
  }

  /** Peers learn at once that this engine is going; then the connector closes. */
  @Override
  public void close() {
    try {
      discovery.deregister(registration);
    } finally {
      delegate.close();
    }
  }

  @Override
  public String toString() {
    return delegate.toString();
  }

  private final class RegisteringWorker implements WorkerSide {
    private final WorkerSide worker;

    RegisteringWorker(WorkerSide worker) {
      this.worker = worker;
    }

    @Override
    public KvMemory allocateKvCache(KvLayout layout) {
      return worker.allocateKvCache(layout);
    }

    @Override
    public void registerKvCache(KvMemory memory, KvLayout layout) {
      worker.registerKvCache(memory, layout);
      discovery.kvCacheRegistered(registration, layout);
    }

    @Override
    public void startLoad(StepMetadata metadata) {
      worker.startLoad(metadata);
    }

    @Override
    public FinishedTransfers getFinished(Set<String> finishedRequestIds) {
      return worker.getFinished(finishedRequestIds);
    }

    @Override
    public void sweep() {
      worker.sweep();
    }
  }
}
