package io.kvbridge.spring.scheduling;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.ConnectorStatus;
import io.kvbridge.spi.FinishedTransfers;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.Role;
import io.kvbridge.spi.SchedulerSide;
import io.kvbridge.spi.StepMetadata;
import io.kvbridge.spi.WorkerSide;
import io.kvbridge.transfer.KvMemory;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A connector whose worker side only counts the scheduled calls it gets (and the threads they came
 * on), or fails each of them.
 */
final class StubConnector implements KvConnector {

  final AtomicInteger sweeps = new AtomicInteger();
  final List<String> threads = new CopyOnWriteArrayList<>();
  private final ConnectorSettings settings;
  private final boolean failing;

  private StubConnector(String engineId, Role role, boolean failing) {
    this.settings = ConnectorSettings.builder("stub", engineId).role(role).build();
    this.failing = failing;
  }

  static StubConnector counting(String engineId, Role role) {
    return new StubConnector(engineId, role, false);
  }

  static StubConnector failing(String engineId, Role role) {
    return new StubConnector(engineId, role, true);
  }

  @Override
  public ConnectorSettings settings() {
    return settings;
  }

  @Override
  public SchedulerSide scheduler() {
    throw new UnsupportedOperationException("stub");
  }

  @Override
  public WorkerSide worker(int rank) {
    return new WorkerSide() {
      @Override
      public List<KvMemory> allocateKvRegions(KvLayout layout) {
        throw new UnsupportedOperationException("stub");
      }

      @Override
      public void registerKvCache(List<KvMemory> regions, KvLayout layout) {
        throw new UnsupportedOperationException("stub");
      }

      @Override
      public void layerSaved(String requestId, int layer) {
        throw new UnsupportedOperationException("stub");
      }

      @Override
      public void startLoad(StepMetadata metadata) {
        throw new UnsupportedOperationException("stub");
      }

      @Override
      public FinishedTransfers getFinished(Set<String> finishedRequestIds) {
        throw new UnsupportedOperationException("stub");
      }

      @Override
      public void sweep() {
        record(sweeps);
      }
    };
  }

  private void record(AtomicInteger counter) {
    threads.add(Thread.currentThread().getName());
    counter.incrementAndGet();
    if (failing) {
      throw new IllegalStateException("engine " + settings.engineId() + " is broken");
    }
  }

  @Override
  public void peerGone(String engineId, String why) {
    throw new UnsupportedOperationException("stub");
  }

  @Override
  public AutoCloseable listen(io.kvbridge.spi.ConnectorListener listener) {
    return () -> {};
  }

  @Override
  public ConnectorStatus status() {
    throw new UnsupportedOperationException("stub");
  }

  @Override
  public void close() {}
}
