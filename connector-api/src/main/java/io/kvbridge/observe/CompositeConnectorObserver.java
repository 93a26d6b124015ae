package io.kvbridge.observe;

import io.kvbridge.lease.Lease;
import io.kvbridge.lease.LeaseEnd;
import io.kvbridge.lease.LeaseEndView;
import io.kvbridge.lease.LeaseView;
import io.kvbridge.transfer.TransferTelemetry;
import java.util.List;

/** Forwards every event to each of several observers, in order. */
public final class CompositeConnectorObserver implements ConnectorObserver {

  private final List<ConnectorObserver> observers;

  private CompositeConnectorObserver(List<ConnectorObserver> observers) {
    this.observers = observers;
  }

  /** One observer that forwards to all of {@code observers}; no wrapper for none or one. */
  public static ConnectorObserver of(List<ConnectorObserver> observers) {
    List<ConnectorObserver> useful =
        observers.stream().filter(o -> o != ConnectorObserver.NONE).toList();
    if (useful.isEmpty()) {
      return ConnectorObserver.NONE;
    }
    return useful.size() == 1 ? useful.get(0) : new CompositeConnectorObserver(useful);
  }

  @Override
  public void granted(Lease lease) {
    observers.forEach(o -> o.granted(lease));
  }

  @Override
  public void renewed(LeaseView lease) {
    observers.forEach(o -> o.renewed(lease));
  }

  @Override
  public void renewed(Lease lease) {
    observers.forEach(o -> o.renewed(lease));
  }

  @Override
  public void ended(LeaseEndView end) {
    observers.forEach(o -> o.ended(end));
  }

  @Override
  public void ended(LeaseEnd end) {
    observers.forEach(o -> o.ended(end));
  }

  @Override
  public void leaseConfirmed(String requestId, long nanos) {
    observers.forEach(o -> o.leaseConfirmed(requestId, nanos));
  }

  @Override
  public void transferCompleted(String requestId, long bytes, long nanos) {
    observers.forEach(o -> o.transferCompleted(requestId, bytes, nanos));
  }

  @Override
  public void transferFailed(String requestId, String reason) {
    observers.forEach(o -> o.transferFailed(requestId, reason));
  }

  @Override
  public void rejected(RejectedInput kind, String detail) {
    observers.forEach(o -> o.rejected(kind, detail));
  }

  @Override
  public void heartbeatReceived(boolean renewed) {
    observers.forEach(o -> o.heartbeatReceived(renewed));
  }

  @Override
  public void readPosted(String requestId, int descriptors, long bytes, long nanos) {
    observers.forEach(o -> o.readPosted(requestId, descriptors, bytes, nanos));
  }

  @Override
  public void transferTelemetry(String requestId, TransferTelemetry telemetry) {
    observers.forEach(o -> o.transferTelemetry(requestId, telemetry));
  }

  @Override
  public void notificationFailed(String toEngineId, String message) {
    observers.forEach(o -> o.notificationFailed(toEngineId, message));
  }

  @Override
  public void handshakeCompleted(String producerEngineId, long nanos) {
    observers.forEach(o -> o.handshakeCompleted(producerEngineId, nanos));
  }

  @Override
  public void handshakeFailed(String producerEngineId, long nanos, String reason) {
    observers.forEach(o -> o.handshakeFailed(producerEngineId, nanos, reason));
  }

  @Override
  public void clockEstimated(String producerEngineId, long offsetNanos, long uncertaintyNanos) {
    observers.forEach(o -> o.clockEstimated(producerEngineId, offsetNanos, uncertaintyNanos));
  }
}
