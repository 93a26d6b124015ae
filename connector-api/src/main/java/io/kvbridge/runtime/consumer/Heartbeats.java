package io.kvbridge.runtime.consumer;

import io.kvbridge.runtime.engine.ConnectorCounters;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.transfer.Transport;
import io.kvbridge.transfer.TransportException;
import io.kvbridge.wire.LeaseRef;
import io.kvbridge.wire.ProtocolMessage;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Renews, every {@code heartbeatInterval}, on each producer the leases this consumer still means to
 * read (loads from allocation to the end of their read), one message per producer and up to {@link
 * ProtocolMessage#MAX_HEARTBEAT_LEASES} leases each. Sent from the connector's own progress (every
 * {@code getFinished} and {@code sweep}), so the interval takes effect without any scheduler of the
 * engine's. Remembers when it last wrote to each producer, so the answer's echo yields a clock
 * sample.
 *
 * <p>Threads: confined to the connector's lock.
 */
final class Heartbeats {

  private static final System.Logger LOG = System.getLogger(Heartbeats.class.getName());

  private final ConnectorSettings settings;
  private final Transport transport;
  private final LoadTable loads;
  private final ConnectorCounters counters;
  private final Map<String, Long> sentAt = new HashMap<>();
  private long lastRound;

  Heartbeats(
      ConnectorSettings settings,
      Transport transport,
      LoadTable loads,
      ConnectorCounters counters) {
    this.settings = settings;
    this.transport = transport;
    this.loads = loads;
    this.counters = counters;
    // A load's lease is fresh when it is confirmed: the first round is due one interval later.
    this.lastRound = settings.clock().nanoTime();
  }

  /** Sends a round of heartbeats if one interval passed since the last. */
  void sendIfDue(long now) {
    if (now - lastRound < settings.heartbeatInterval().toNanos()) {
      return;
    }
    lastRound = now;
    Map<ProducerPeer, List<LeaseRef>> byProducer = new LinkedHashMap<>();
    for (Load load : loads.all()) {
      if (load.hasPeer() && load.state().wantsHeartbeats()) {
        byProducer.computeIfAbsent(load.peer(), k -> new ArrayList<>()).add(load.lease());
      }
    }
    byProducer.forEach((peer, refs) -> send(peer, refs, now));
  }

  /** Whether {@code echo} is the time this consumer last sent heartbeats to {@code engineId}. */
  boolean isEchoOfLastRound(String engineId, long echo) {
    Long sent = sentAt.get(engineId);
    return sent != null && sent == echo;
  }

  private void send(ProducerPeer peer, List<LeaseRef> refs, long now) {
    sentAt.put(peer.engineId(), now);
    for (int from = 0; from < refs.size(); from += ProtocolMessage.MAX_HEARTBEAT_LEASES) {
      List<LeaseRef> chunk =
          refs.subList(from, Math.min(refs.size(), from + ProtocolMessage.MAX_HEARTBEAT_LEASES));
      try {
        transport.notify(
            peer.agentName(),
            ProtocolMessage.encode(new ProtocolMessage.Heartbeat(settings.engineId(), now, chunk)));
      } catch (TransportException e) {
        counters.notificationFailed(peer.engineId(), "heartbeat");
        LOG.log(Level.WARNING, "heartbeat to " + peer.engineId() + " failed: " + e.getMessage());
      }
    }
  }
}
