package io.kvbridge.fake.observe;

import io.kvbridge.observe.ConnectorObserver;
import io.kvbridge.transfer.TransferTelemetry;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Records the events a connector reports beyond its counters, as short lines. */
final class RecordingObserver implements ConnectorObserver {

  final List<String> events = new CopyOnWriteArrayList<>();

  /** A posted read: descriptors and bytes. */
  record Posted(String requestId, int descriptors, long bytes) {}

  /** What the transport measured of one read of a load. */
  record Measured(String requestId, TransferTelemetry telemetry) {}

  final List<Posted> posted = new CopyOnWriteArrayList<>();
  final List<Long> transferBytes = new CopyOnWriteArrayList<>();
  final List<Measured> measured = new CopyOnWriteArrayList<>();

  @Override
  public void transferCompleted(String requestId, long bytes, long nanos) {
    transferBytes.add(bytes);
  }

  @Override
  public void readPosted(String requestId, int descriptors, long bytes, long nanos) {
    posted.add(new Posted(requestId, descriptors, bytes));
  }

  @Override
  public void transferTelemetry(String requestId, TransferTelemetry telemetry) {
    measured.add(new Measured(requestId, telemetry));
  }

  @Override
  public void notificationFailed(String toEngineId, String message) {
    events.add("notification failed: " + message + " to " + toEngineId);
  }

  @Override
  public void handshakeCompleted(String producerEngineId, long nanos) {
    events.add("handshake completed: " + producerEngineId);
  }

  @Override
  public void handshakeFailed(String producerEngineId, long nanos, String reason) {
    events.add("handshake failed: " + producerEngineId);
  }

  @Override
  public void clockEstimated(String producerEngineId, long offsetNanos, long uncertaintyNanos) {
    events.add("clock: " + producerEngineId);
  }
}
