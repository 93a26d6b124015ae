package io.kvbridge.runtime.engine;

import io.kvbridge.lease.EndReason;
import io.kvbridge.lease.Lease;
import io.kvbridge.lease.LeaseEnd;
import io.kvbridge.lease.LeaseEndView;
import io.kvbridge.lease.LeaseView;
import io.kvbridge.observe.ConnectorObserver;
import io.kvbridge.observe.EnumCounters;
import io.kvbridge.observe.RejectedInput;
import io.kvbridge.transfer.TransferTelemetry;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counts a connector's events for {@link io.kvbridge.spi.ConnectorStatus} and forwards each to the
 * user's observer. Thread-safe: counters are {@link LongAdder}s.
 */
public final class ConnectorCounters implements ConnectorObserver {

  private final ConnectorObserver delegate;
  private final LongAdder granted = new LongAdder();
  private final EnumCounters<EndReason> ended = new EnumCounters<>(EndReason.class);
  private final EnumCounters<RejectedInput> rejected = new EnumCounters<>(RejectedInput.class);
  private final LongAdder readsCompleted = new LongAdder();
  private final LongAdder bytesRead = new LongAdder();
  private final LongAdder loadsFailed = new LongAdder();
  private final LongAdder heartbeatsRenewed = new LongAdder();
  private final LongAdder heartbeatsIgnored = new LongAdder();
  private final LongAdder renewalsConfirmed = new LongAdder();

  public ConnectorCounters(ConnectorObserver delegate) {
    this.delegate = delegate;
  }

  @Override
  public void granted(Lease lease) {
    granted.increment();
    delegate.granted(lease);
  }

  @Override
  public void renewed(LeaseView lease) {
    delegate.renewed(lease);
  }

  @Override
  public void renewed(Lease lease) {
    delegate.renewed(lease);
  }

  @Override
  public void ended(LeaseEndView end) {
    ended.increment(end.reason());
    delegate.ended(end);
  }

  @Override
  public void ended(LeaseEnd end) {
    ended.increment(end.reason());
    delegate.ended(end);
  }

  @Override
  public void transferCompleted(String requestId, long bytes, long nanos) {
    readsCompleted.increment();
    bytesRead.add(bytes);
    delegate.transferCompleted(requestId, bytes, nanos);
  }

  @Override
  public void transferFailed(String requestId, String reason) {
    loadsFailed.increment();
    delegate.transferFailed(requestId, reason);
  }

  @Override
  public void rejected(RejectedInput kind, String detail) {
    rejected.increment(kind);
    delegate.rejected(kind, detail);
  }

  @Override
  public void heartbeatReceived(boolean renewed) {
    (renewed ? heartbeatsRenewed : heartbeatsIgnored).increment();
    delegate.heartbeatReceived(renewed);
  }

  @Override
  public void leaseConfirmed(String requestId, long nanos) {
    delegate.leaseConfirmed(requestId, nanos);
  }

  @Override
  public void readPosted(String requestId, int descriptors, long bytes, long nanos) {
    delegate.readPosted(requestId, descriptors, bytes, nanos);
  }

  @Override
  public void transferTelemetry(String requestId, TransferTelemetry telemetry) {
    delegate.transferTelemetry(requestId, telemetry);
  }

  @Override
  public void notificationFailed(String toEngineId, String message) {
    delegate.notificationFailed(toEngineId, message);
  }

  @Override
  public void handshakeCompleted(String producerEngineId, long nanos) {
    delegate.handshakeCompleted(producerEngineId, nanos);
  }

  @Override
  public void handshakeFailed(String producerEngineId, long nanos, String reason) {
    delegate.handshakeFailed(producerEngineId, nanos, reason);
  }

  @Override
  public void clockEstimated(String producerEngineId, long offsetNanos, long uncertaintyNanos) {
    delegate.clockEstimated(producerEngineId, offsetNanos, uncertaintyNanos);
  }

  public long granted() {
    return granted.sum();
  }

  public Map<EndReason, Long> ended() {
    return ended.snapshot();
  }

  public Map<RejectedInput, Long> rejected() {
    return rejected.snapshot();
  }

  public long readsCompleted() {
    return readsCompleted.sum();
  }

  public long bytesRead() {
    return bytesRead.sum();
  }

  public long loadsFailed() {
    return loadsFailed.sum();
  }

  public long heartbeatsRenewed() {
    return heartbeatsRenewed.sum();
  }

  public long heartbeatsIgnored() {
    return heartbeatsIgnored.sum();
  }

  public void renewalConfirmed() {
    renewalsConfirmed.increment();
  }

  public long renewalsConfirmed() {
    return renewalsConfirmed.sum();
  }
}
