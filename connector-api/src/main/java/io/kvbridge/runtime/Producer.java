package io.kvbridge.runtime;

import io.kvbridge.integrity.ChecksumScheme;
import io.kvbridge.integrity.ReadDigest;
import io.kvbridge.lease.AckOutcome;
import io.kvbridge.lease.Lease;
import io.kvbridge.lease.LeaseEnd;
import io.kvbridge.lease.LeaseListener;
import io.kvbridge.lease.LeaseTable;
import io.kvbridge.lease.Rejection;
import io.kvbridge.lease.RenewOutcome;
import io.kvbridge.observe.RejectedInput;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.FinishDecision;
import io.kvbridge.spi.FinishedRequest;
import io.kvbridge.spi.KvLayout;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.Transport;
import io.kvbridge.transfer.TransportException;
import io.kvbridge.wire.Handshake;
import io.kvbridge.wire.HandshakeChannel;
import io.kvbridge.wire.LeaseRef;
import io.kvbridge.wire.MalformedMessageException;
import io.kvbridge.wire.ProtocolMessage;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * P's half of the pull protocol: grants leases, answers handshakes, validates completions
 * (ACK/NACK), renews on heartbeats and collects ended leases for {@code doneSending}.
 *
 * <p>Threads: the lease table and the maps here are thread-safe; the handshake server calls {@link
 * #answerHandshake} on its own threads, everything else runs on the engine thread or the scheduled
 * sweep.
 */
final class Producer {

  private static final System.Logger LOG = System.getLogger(Producer.class.getName());

  private final ConnectorSettings settings;
  private final Transport transport;
  private final ConnectorCounters counters;
  private final LeaseTable leases;
  private final ConcurrentLinkedQueue<String> ended = new ConcurrentLinkedQueue<>();
  private final Map<String, String> consumersByAgent = new ConcurrentHashMap<>();
  private volatile KvMemory memory;
  private volatile KvLayout layout;
  private volatile HandshakeChannel.Server server;

  Producer(ConnectorSettings settings, Transport transport, ConnectorCounters counters) {
    this.settings = settings;
    this.transport = transport;
    this.counters = counters;
    this.leases = new LeaseTable(settings.clock(), settings.leaseTerms(), new EndLogger());
  }

  /** Starts answering handshakes for {@code kvMemory}. */
  void start(KvMemory kvMemory, KvLayout kvLayout) throws IOException {
    this.memory = kvMemory;
    this.layout = kvLayout;
    this.server =
        HandshakeChannel.forAddress(settings.handshakeAddress())
            .serve(
                settings.handshakeAddress(),
                settings.engineId(),
                new HandshakeChannel.Responder() {
                  @Override
                  public byte[] greet() {
                    return new byte[0];
                  }

                  @Override
                  public byte[] answer(byte[] greeting, byte[] request) {
                    return answerHandshake(request);
                  }
                });
    LOG.log(
        Level.INFO,
        "engine {0} answers handshakes at {1} ({2} blocks of {3} bytes in {4})",
        settings.engineId(),
        server.address(),
        kvLayout.blockCount(),
        kvLayout.blockBytes(),
        kvMemory.kind());
  }

  Optional<String> handshakeAddress() {
    HandshakeChannel.Server s = server;
    return s == null ? Optional.empty() : Optional.of(s.address().toString());
  }

  FinishDecision requestFinished(FinishedRequest request) {
    KvLayout kv = layout;
    if (request.aborted() || !request.remoteDecode() || kv == null || server == null) {
      return FinishDecision.freeNow();
    }
    int fullBlocks =
        Math.min(request.blockIds().size(), request.computedTokens() / kv.tokensPerBlock());
    if (fullBlocks == 0) {
      return FinishDecision.freeNow();
    }
    List<Integer> blocks = request.blockIds().subList(0, fullBlocks);
    int tokens = fullBlocks * kv.tokensPerBlock();
    String promptDigest = request.prompt().digest(tokens);
    // Fingerprinted before the grant: from here on the blocks belong to the lease, and the engine
    // does not write them until doneSending names the request.
    KvMemory kvMemory = memory;
    ChecksumScheme scheme = ChecksumScheme.forMemory(kvMemory.kind());
    List<Integer> checksums = new ArrayList<>(blocks.size());
    for (int block : blocks) {
      checksums.add(scheme.checksum(kvMemory, (long) block * kv.blockBytes(), kv.blockBytes()));
    }
    Lease lease =
        leases.grant(
            request.requestId(),
            blocks,
            settings.acksRequired(),
            ReadDigest.of(request.requestId(), promptDigest, kv.blockBytes(), blocks));
    return FinishDecision.holdFor(
        new TransferParams(
            settings.engineId(),
            request.requestId(),
            blocks,
            tokens,
            promptDigest,
            lease.token().value(),
            lease.deadlineNanos(),
            server.address().toString(),
            scheme,
            checksums));
  }

  boolean revoke(String requestId, String why) {
    return leases.revoke(requestId, why).isPresent();
  }

  void onCompletion(String fromAgent, ProtocolMessage.Completion completion) {
    String consumer = consumersByAgent.get(fromAgent);
    if (consumer == null) {
      counters.rejected(RejectedInput.UNKNOWN_PEER, "completion from agent " + fromAgent);
      return;
    }
    LeaseRef ref = completion.lease();
    AckOutcome outcome =
        leases.acknowledge(ref.requestId(), ref.token(), consumer, completion.readDigest());
    ProtocolMessage reply;
    if (outcome instanceof AckOutcome.Refused refused) {
      counters.rejected(
          toInput(refused.reason()), "completion of " + ref.requestId() + " from " + consumer);
      reply = new ProtocolMessage.Nack(ref, refused.reason().name());
    } else {
      reply = new ProtocolMessage.Ack(ref);
    }
    try {
      transport.notify(fromAgent, ProtocolMessage.encode(reply));
    } catch (TransportException e) {
      // The consumer times out waiting and fails the load; the lease outcome stands.
      LOG.log(
          Level.WARNING,
          "could not answer " + consumer + " for " + ref.requestId() + ": " + e.getMessage());
    }
  }

  void onHeartbeat(String fromAgent, ProtocolMessage.Heartbeat heartbeat) {
    String consumer = consumersByAgent.get(fromAgent);
    if (consumer == null) {
      counters.rejected(RejectedInput.UNKNOWN_PEER, "heartbeat from agent " + fromAgent);
      return;
    }
    List<ProtocolMessage.Renewal> renewals = new ArrayList<>(heartbeat.leases().size());
    for (LeaseRef ref : heartbeat.leases()) {
      RenewOutcome outcome = leases.renew(ref.requestId(), ref.token());
      counters.heartbeatReceived(outcome instanceof RenewOutcome.Renewed);
      if (outcome instanceof RenewOutcome.Renewed renewed) {
        renewals.add(new ProtocolMessage.Renewal(ref, renewed.lease().deadlineNanos()));
      } else if (outcome instanceof RenewOutcome.Ignored ignored) {
        counters.rejected(
            toInput(ignored.reason()), "heartbeat for " + ref.requestId() + " from " + consumer);
      }
    }
    if (renewals.isEmpty()) {
      return;
    }
    // The consumer checks its safety margin against the renewed deadlines.
    try {
      transport.notify(fromAgent, ProtocolMessage.encode(new ProtocolMessage.Renewed(renewals)));
    } catch (TransportException e) {
      LOG.log(Level.WARNING, "could not confirm renewals to " + consumer + ": " + e.getMessage());
    }
  }

  void expire() {
    leases.expire();
  }

  Set<String> drainEnded() {
    Set<String> out = new HashSet<>();
    for (String id = ended.poll(); id != null; id = ended.poll()) {
      out.add(id);
    }
    return out;
  }

  LeaseTable leases() {
    return leases;
  }

  Set<String> knownConsumers() {
    return Set.copyOf(consumersByAgent.values());
  }

  void close() {
    HandshakeChannel.Server s = server;
    if (s != null) {
      s.close();
    }
    leases.revokeAll("connector closed");
  }

  byte[] answerHandshake(byte[] frame) {
    Handshake.Response response;
    try {
      response = accept(Handshake.decodeRequest(frame));
    } catch (MalformedMessageException e) {
      response = new Handshake.Refused("malformed handshake: " + e.getMessage());
    }
    if (response instanceof Handshake.Refused refused) {
      counters.rejected(RejectedInput.HANDSHAKE_REFUSED, refused.reason());
      LOG.log(Level.WARNING, "handshake refused: {0}", refused.reason());
    }
    return Handshake.encode(response);
  }

  private Handshake.Response accept(Handshake.Request request) {
    KvLayout kv = layout;
    if (!request.fingerprint().equals(kv.fingerprint())) {
      return new Handshake.Refused(
          "incompatible KV layout: consumer "
              + request.consumerEngineId()
              + " has fingerprint "
              + request.fingerprint()
              + ", this producer has "
              + kv.fingerprint());
    }
    String agent;
    try {
      agent = transport.loadRemoteMetadata(request.consumerMetadata());
    } catch (TransportException e) {
      return new Handshake.Refused("consumer metadata rejected: " + e.getMessage());
    }
    consumersByAgent.put(agent, request.consumerEngineId());
    KvMemory kvMemory = memory;
    return new Handshake.Accepted(
        settings.engineId(),
        transport.localMetadata(),
        kv.blockCount(),
        kv.blockBytes(),
        kvMemory.address(),
        kvMemory.deviceId(),
        kvMemory.kind(),
        settings.clock().nanoTime());
  }

  private static RejectedInput toInput(Rejection rejection) {
    return switch (rejection) {
      case UNKNOWN_LEASE -> RejectedInput.UNKNOWN_LEASE;
      case WRONG_TOKEN -> RejectedInput.WRONG_TOKEN;
      case WRONG_BLOCKS -> RejectedInput.WRONG_BLOCKS;
      case ALREADY_ENDED -> RejectedInput.LATE_OR_DUPLICATE;
      case EXPIRED -> RejectedInput.EXPIRED_COMPLETION;
    };
  }

  /** Queues ended leases for doneSending, counts them and logs each at the level it deserves. */
  private final class EndLogger implements LeaseListener {
    @Override
    public void granted(Lease lease) {
      counters.granted(lease);
    }

    @Override
    public void renewed(Lease lease) {
      counters.renewed(lease);
    }

    @Override
    public void ended(LeaseEnd end) {
      ended.add(end.lease().requestId());
      counters.ended(end);
      Level level =
          switch (end.reason()) {
            case READ -> Level.DEBUG;
            case REVOKED -> Level.INFO;
            case EXPIRED -> Level.WARNING;
          };
      LOG.log(
          level,
          "lease of {0} ended {1} ({2}); {3} blocks go back to the pool",
          end.lease().requestId(),
          end.reason(),
          end.detail(),
          end.lease().blockIds().size());
    }
  }
}
