package io.kvbridge.fake;

import java.util.Arrays;
import java.util.function.Predicate;

/**
 * A notification on its way across a {@link FakeFabric}, as {@link FakeFaults} rules see it: sent
 * with {@code notify} or attached to a finished transfer.
 *
 * @param fromAgent the sending agent
 * @param toAgent the receiving agent
 * @param payload the message bytes
 */
public record InFlightNotification(String fromAgent, String toAgent, byte[] payload) {

  /** Copies the payload so rules cannot change what is delivered. */
  public InFlightNotification {
    payload = payload.clone();
  }

  @Override
  public byte[] payload() {
    return payload.clone();
  }

  /** Matches every notification. */
  public static Predicate<InFlightNotification> any() {
    return n -> true;
  }

  /** Matches notifications sent by {@code agentName}. */
  public static Predicate<InFlightNotification> sentBy(String agentName) {
    return n -> n.fromAgent.equals(agentName);
  }

  /** Matches notifications sent to {@code agentName}. */
  public static Predicate<InFlightNotification> sentTo(String agentName) {
    return n -> n.toAgent.equals(agentName);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof InFlightNotification n
        && fromAgent.equals(n.fromAgent)
        && toAgent.equals(n.toAgent)
        && Arrays.equals(payload, n.payload);
  }

  @Override
  public int hashCode() {
    return (31 * fromAgent.hashCode() + toAgent.hashCode()) * 31 + Arrays.hashCode(payload);
  }

  @Override
  public String toString() {
    return "InFlightNotification["
        + fromAgent
        + " -> "
        + toAgent
        + ", "
        + payload.length
        + " bytes]";
  }
}
