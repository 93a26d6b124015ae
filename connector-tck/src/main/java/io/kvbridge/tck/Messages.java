package io.kvbridge.tck;

import io.kvbridge.integrity.ReadDigest;
import io.kvbridge.wire.LeaseRef;
import io.kvbridge.wire.ProtocolMessage;

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
            0L, 0L, java.util.List.of(new ProtocolMessage.Renewal(lease, deadlineNanos))));
  }

  /**
   * A completion for {@code lease} claiming to come from {@code consumerEngineId}, with a read
   * digest of zeros (the digest of no real read).
   */
  public static byte[] completion(LeaseRef lease, String consumerEngineId) {
    return completion(lease, consumerEngineId, ReadDigest.fromBytes(new byte[ReadDigest.BYTES]));
  }

  /** A completion for {@code lease} presenting {@code readDigest}. */
  public static byte[] completion(LeaseRef lease, String consumerEngineId, ReadDigest readDigest) {
    return ProtocolMessage.encode(
        new ProtocolMessage.Completion(lease, consumerEngineId, readDigest, 0));
  }
}
