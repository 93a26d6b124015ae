package io.kvbridge.observe;

import io.kvbridge.lease.LeaseEndView;
import io.kvbridge.lease.LeaseListener;
import io.kvbridge.lease.LeaseView;
import io.kvbridge.transfer.TransferTelemetry;
import io.kvbridge.transfer.Transport;

/**
 * Receives a connector's events as they happen, for metrics and logs. Called on the thread that
 * caused the event, sometimes under a connector lock: implementations must be quick and must not
 * call back into the connector.
 */
public interface ConnectorObserver extends LeaseListener {

  /** An observer that ignores everything, and asks the lease table for no snapshots. */
  ConnectorObserver NONE =
      new ConnectorObserver() {
        @Override
        public void renewed(LeaseView lease) {}

        @Override
        public void ended(LeaseEndView end) {}
      };

  /** A read finished and P validated it: {@code bytes} moved in {@code nanos}. */
  default void transferCompleted(String requestId, long bytes, long nanos) {}

  /** A load failed; the engine applies its load-failure policy. */
  default void transferFailed(String requestId, String reason) {}

  /** Untrusted input was refused. */
  default void rejected(RejectedInput kind, String detail) {}

  /** A heartbeat renewed ({@code renewed}) or was ignored on P. */
  default void heartbeatReceived(boolean renewed) {}

  /**
   * D: the producer confirmed the lease of load {@code requestId}, {@code nanos} after the CONFIRM
   * was sent (the round trip the load waits for before it reads).
   */
  default void leaseConfirmed(String requestId, long nanos) {}

  /**
   * D posted a load's READ: {@code descriptors} pieces over every rank pair, {@code bytes} in all;
   * posting (planning the pieces and handing them to the transport) took {@code nanos}.
   */
  default void readPosted(String requestId, int descriptors, long bytes, long nanos) {}

  /**
   * One READ of D's load {@code requestId} finished, and its transport measured it ({@link
   * Transport#telemetry}): a load posts one READ per (D rank, P rank) pair, so a load may report
   * several. Reported when the transport says the bytes are in place, before the content check and
   * P's validation, so a read whose load fails later is reported too. Transports that measure
   * nothing never report it.
   */
  default void transferTelemetry(String requestId, TransferTelemetry telemetry) {}

  /**
   * A protocol notification could not be handed to the transport; {@code message} is its kind in
   * lower case ({@code confirm}, {@code completion}, {@code release}, {@code heartbeat}, {@code
   * ack}, {@code nack}, {@code confirmed}, {@code renewed}).
   */
  default void notificationFailed(String toEngineId, String message) {}

  /** D completed a handshake with producer {@code producerEngineId} in {@code nanos}. */
  default void handshakeCompleted(String producerEngineId, long nanos) {}

  /**
   * D's handshake with producer {@code producerEngineId} failed after {@code nanos} (0 when it was
   * refused before it started, e.g. an address that does not parse or too many in flight).
   */
  default void handshakeFailed(String producerEngineId, long nanos, String reason) {}

  /**
   * D's estimate of producer {@code producerEngineId}'s clock, after a handshake, a confirmation or
   * a renewal answer: the producer's clock reads {@code offsetNanos} ahead of D's, give or take
   * {@code uncertaintyNanos}.
   */
  default void clockEstimated(String producerEngineId, long offsetNanos, long uncertaintyNanos) {}
}
