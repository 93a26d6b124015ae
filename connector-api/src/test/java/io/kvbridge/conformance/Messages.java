package io.kvbridge.conformance;

import io.kvbridge.protocol.LeaseRef;
import io.kvbridge.protocol.ProtocolMessage;

/** Encodes protocol messages for tests that forge or replay them. */
public final class Messages {

  private Messages() {}

  /** A completion for {@code lease} claiming to come from {@code consumerEngineId}. */
  public static byte[] completion(LeaseRef lease, String consumerEngineId) {
    return ProtocolMessage.encode(new ProtocolMessage.Completion(lease, consumerEngineId));
  }
}
