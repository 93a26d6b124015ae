package io.kvbridge.conformance;

import io.kvbridge.protocol.LeaseRef;
import io.kvbridge.protocol.ProtocolMessage;

/** Encodes protocol messages for tests that forge or replay them. */
public final class Messages {

  private Messages() {}

  /** A producer's ACK for {@code lease}. */
  public static byte[] ack(LeaseRef lease) {
    return ProtocolMessage.encode(new ProtocolMessage.Ack(lease));
  }

  /** A producer's confirmation that {@code lease} now ends at {@code deadlineNanos}. */
  public static byte[] renewed(LeaseRef lease, long deadlineNanos) {
    return ProtocolMessage.encode(
        new ProtocolMessage.Renewed(
            java.util.List.of(new ProtocolMessage.Renewal(lease, deadlineNanos))));
  }

  /** A completion for {@code lease} claiming to come from {@code consumerEngineId}. */
  public static byte[] completion(LeaseRef lease, String consumerEngineId) {
    return ProtocolMessage.encode(new ProtocolMessage.Completion(lease, consumerEngineId));
  }
}
