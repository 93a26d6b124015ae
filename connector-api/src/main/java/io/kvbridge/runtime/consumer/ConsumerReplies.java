package io.kvbridge.runtime.consumer;

import io.kvbridge.observe.RejectedInput;
import io.kvbridge.observe.TransferSpans;
import io.kvbridge.runtime.engine.ConnectorCounters;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.transfer.Transport;
import io.kvbridge.transfer.TransportException;
import io.kvbridge.wire.LeaseRef;
import io.kvbridge.wire.ProtocolMessage;
import java.lang.System.Logger.Level;
import java.util.Optional;

/**
 * The consumer's side of the protocol's notifications: what it sends (Confirm, Completion, Release)
 * and what it does with what producers answer (Confirmed, ACK, NACK, Renewed). An answer counts
 * only if it comes from the agent of the producer the load chose and names the load's lease with
 * its token, in the state that expects it; anything else is counted as an unexpected reply and
 * changes nothing.
 *
 * <p>Threads: confined to the connector's lock.
 */
public final class ConsumerReplies {

  private static final System.Logger LOG = System.getLogger(ConsumerReplies.class.getName());

  private final Consumer consumer;
  private final ConnectorSettings settings;
  private final ConnectorCounters counters;

  public ConsumerReplies(
      Consumer consumer, ConnectorSettings settings, ConnectorCounters counters) {
    this.consumer = consumer;
    this.settings = settings;
    this.counters = counters;
  }

  /** Handles one producer's answer. */
  public void onMessage(String fromAgent, ProtocolMessage.ToConsumer message) {
    message.handleBy(new Answer(fromAgent, settings.clock().nanoTime()));
  }

  /** One answer from {@code fromAgent}, received at {@code now}, handled by its type. */
  private final class Answer implements ProtocolMessage.ToConsumer.Handler {
    private final String fromAgent;
    private final long now;

    Answer(String fromAgent, long now) {
      this.fromAgent = fromAgent;
      this.now = now;
    }

    @Override
    public void renewed(ProtocolMessage.Renewed renewed) {
      onRenewed(fromAgent, renewed, now);
    }

    @Override
    public void confirmed(ProtocolMessage.Confirmed c) {
      Optional<Load> found = loadFor(fromAgent, c.lease()).filter(Load::awaitsConfirmation);
      if (found.isEmpty()) {
        unexpected(c, fromAgent);
        return;
      }
      Load load = found.get();
      if (c.echoSentAtNanos() == load.confirmSentAt()) {
        sampleClock(load.peer(), c.echoSentAtNanos(), c.producerClockNanos(), now);
      }
      consumer.confirmed(load, c.deadlineNanos());
    }

    @Override
    public void nack(ProtocolMessage.Nack nack) {
      Optional<Load> found = loadFor(fromAgent, nack.lease());
      if (found.isEmpty()) {
        unexpected(nack, fromAgent);
        return;
      }
      Load load = found.get();
      String why =
          "producer " + load.peer().engineId() + " refused the lease (" + nack.reason() + ")";
      if (load.state() == Load.State.CONFIRMING) {
        consumer.refuse(load, why);
      } else if (load.awaitsConfirmation()) {
        consumer.fail(load, why);
      } else if (load.state() == Load.State.AWAITING_REPLY) {
        load.phase().tag(TransferSpans.REPLY, "nack");
        consumer.fail(load, why + "; the read is not used");
      } else if (load.state() == Load.State.READING
          && load.params().streamed()
          && nack.reason().equals(ProtocolMessage.Nack.REVOKED)) {
        // A streamed lease revoked while P still computed: its last layers will never come.
        consumer.fail(load, why + "; the read is not used");
      } else {
        unexpected(nack, fromAgent);
      }
    }

    @Override
    public void layers(ProtocolMessage.Layers layers) {
      Optional<Load> found = loadOf(fromAgent, layers.lease().requestId());
      if (found.isEmpty()) {
        unexpected(layers, fromAgent);
      } else if (!found.get().lease().token().equals(layers.lease().token())) {
        counters.rejected(
            RejectedInput.WRONG_TOKEN,
            "layers of " + layers.lease().requestId() + " from agent " + fromAgent);
      } else {
        consumer.layersAnnounced(found.get(), layers);
      }
    }

    @Override
    public void ack(ProtocolMessage.Ack ack) {
      Optional<Load> found =
          loadFor(fromAgent, ack.lease()).filter(l -> l.state() == Load.State.AWAITING_REPLY);
      if (found.isPresent()) {
        consumer.receivedAfterAck(found.get());
      } else {
        unexpected(ack, fromAgent);
      }
    }
  }

  static boolean sendConfirm(
      Transport transport, String engineId, ConnectorCounters counters, Load load, long now) {
    return send(
        transport,
        counters,
        load,
        new ProtocolMessage.Confirm(
            load.lease(), engineId, load.readDigest(), load.effectiveSkip(), now),
        "confirmation");
  }

  static boolean sendCompletion(
      Transport transport, String engineId, ConnectorCounters counters, Load load) {
    return send(
        transport,
        counters,
        load,
        new ProtocolMessage.Completion(
            load.lease(), engineId, load.readDigest(), load.effectiveSkip()),
        "completion");
  }

  static void sendRelease(
      Transport transport, String engineId, ConnectorCounters counters, Load load, String reason) {
    send(
        transport,
        counters,
        load,
        new ProtocolMessage.Release(load.lease(), engineId, reason),
        "release");
  }

  private static boolean send(
      Transport transport,
      ConnectorCounters counters,
      Load load,
      ProtocolMessage message,
      String what) {
    try {
      transport.notify(load.peer().agentName(), ProtocolMessage.encode(message));
      return true;
    } catch (TransportException e) {
      counters.notificationFailed(load.peer().engineId(), message.kind());
      LOG.log(
          Level.WARNING,
          "could not send the " + what + " of " + load.requestId() + ": " + e.getMessage());
      return false;
    }
  }

  /** Offers one exchange's clock sample to the producer's estimate, and reports the estimate. */
  private void sampleClock(ProducerPeer peer, long sent, long remote, long received) {
    peer.clock().offer(sent, remote, received);
    ClockOffset estimate = peer.clock().current();
    counters.clockEstimated(peer.engineId(), estimate.offsetNanos(), estimate.uncertaintyNanos());
  }

  private void onRenewed(String fromAgent, ProtocolMessage.Renewed renewed, long now) {
    Optional<ProducerPeer> peer = consumer.handshakes().byAgent(fromAgent);
    if (peer.isPresent()
        && consumer
            .heartbeats()
            .isEchoOfLastRound(peer.get().engineId(), renewed.echoSentAtNanos())) {
      sampleClock(peer.get(), renewed.echoSentAtNanos(), renewed.producerClockNanos(), now);
    }
    for (ProtocolMessage.Renewal renewal : renewed.renewals()) {
      Optional<Load> found = loadFor(fromAgent, renewal.lease());
      if (found.isEmpty()) {
        counters.rejected(
            RejectedInput.UNEXPECTED_REPLY,
            "renewal of " + renewal.lease().requestId() + " from agent " + fromAgent);
        continue;
      }
      Load load = found.get();
      load.renewed(renewal.deadlineNanos());
      counters.renewalConfirmed();
    }
  }

  /** The load that reads {@code ref}'s lease from {@code fromAgent}'s producer, token checked. */
  private Optional<Load> loadFor(String fromAgent, LeaseRef ref) {
    return loadOf(fromAgent, ref.requestId())
        .filter(load -> load.lease().token().equals(ref.token()));
  }

  /** The load that reads lease {@code requestId} from {@code fromAgent}'s producer; any token. */
  private Optional<Load> loadOf(String fromAgent, String requestId) {
    return consumer
        .handshakes()
        .byAgent(fromAgent)
        .flatMap(peer -> consumer.loads().byLease(new Load.LeaseKey(peer.engineId(), requestId)))
        .filter(load -> load.hasPeer() && load.peer().agentName().equals(fromAgent));
  }

  private void unexpected(ProtocolMessage.LeaseMessage message, String fromAgent) {
    counters.rejected(
        RejectedInput.UNEXPECTED_REPLY,
        message.getClass().getSimpleName()
            + " for "
            + message.lease().requestId()
            + " from agent "
            + fromAgent);
  }
}
