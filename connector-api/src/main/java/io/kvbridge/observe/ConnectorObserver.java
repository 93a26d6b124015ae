package io.kvbridge.observe;

import io.kvbridge.lease.LeaseListener;

/**
 * Receives a connector's events as they happen, for metrics and logs. Called on the thread that
 * caused the event, sometimes under a connector lock: implementations must be quick and must not
 * call back into the connector.
 */
public interface ConnectorObserver extends LeaseListener {

  /** An observer that ignores everything. */
  ConnectorObserver NONE = new ConnectorObserver() {};

  /** A read finished and P validated it: {@code bytes} moved in {@code nanos}. */
  default void transferCompleted(String requestId, long bytes, long nanos) {}

  /** A load failed; the engine applies its load-failure policy. */
  default void transferFailed(String requestId, String reason) {}

  /** Untrusted input was refused. */
  default void rejected(RejectedInput kind, String detail) {}

  /** A heartbeat renewed ({@code renewed}) or was ignored on P. */
  default void heartbeatReceived(boolean renewed) {}
}
