package io.kvbridge.transfer;

import java.util.Arrays;

/**
 * A small message from a remote agent, delivered by {@link Transport#drainNotifications()}.
 *
 * @param fromAgent the sending agent's name, as the transport authenticated it
 * @param payload the message bytes; untrusted
 */
public record Notification(String fromAgent, byte[] payload) {

  /** Copies the payload so callers cannot share it by accident. */
  public Notification {
    payload = payload.clone();
  }

  @Override
  public byte[] payload() {
    return payload.clone();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Notification n
        && fromAgent.equals(n.fromAgent)
        && Arrays.equals(payload, n.payload);
  }

  @Override
  public int hashCode() {
    return 31 * fromAgent.hashCode() + Arrays.hashCode(payload);
  }

  @Override
  public String toString() {
    return "Notification[from=" + fromAgent + ", " + payload.length + " bytes]";
  }
}
