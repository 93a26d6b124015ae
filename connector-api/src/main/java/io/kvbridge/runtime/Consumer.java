package io.kvbridge.runtime;

import io.kvbridge.integrity.ReadDigest;
import io.kvbridge.observe.RejectedInput;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.InvalidTransferParamsException;
import io.kvbridge.spi.KvLayout;
import io.kvbridge.spi.LoadFailure;
import io.kvbridge.spi.LoadMatch;
import io.kvbridge.spi.LoadSpec;
import io.kvbridge.spi.TokenIds;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.transfer.Descriptor;
import io.kvbridge.transfer.DescriptorList;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.TransferHandle;
import io.kvbridge.transfer.TransferOp;
import io.kvbridge.transfer.TransferStatus;
import io.kvbridge.transfer.Transport;
import io.kvbridge.transfer.TransportException;
import io.kvbridge.wire.Handshake;
import io.kvbridge.wire.HandshakeAddress;
import io.kvbridge.wire.HandshakeChannel;
import io.kvbridge.wire.LeaseRef;
import io.kvbridge.wire.MalformedMessageException;
import io.kvbridge.wire.ProtocolMessage;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * D's half of the pull protocol: accepts transfer parameters, handshakes with producers, checks
 * each lease against the safety margin, posts reads, sends completions, and reports a load as
 * received only after P's ACK.
 *
 * <p>Threads: state is guarded by the connector's lock, which callers hold for every method but
 * {@link #peerFor}, which runs unlocked (peers and handshakes in flight are concurrent maps); a
 * handshake across the network runs on this consumer's own daemon threads.
 */
final class Consumer {

  private static final System.Logger LOG = System.getLogger(Consumer.class.getName());

  private final ConnectorSettings settings;
  private final Transport transport;
  private final ConnectorCounters counters;
  private final Map<String, ProducerPeer> peers = new ConcurrentHashMap<>();
  private final Map<String, TransferParams> awaitingAllocation = new LinkedHashMap<>();
  private final List<LoadSpec> toStart = new ArrayList<>();
  private final Map<String, Load> loads = new LinkedHashMap<>();
  private final Map<String, Load> awaitingReply = new HashMap<>();
  private final Set<String> received = new HashSet<>();
  private final List<LoadFailure> failures = new ArrayList<>();
  private final Map<String, String> heartbeated = new HashMap<>();
  private final Map<String, Long> renewedDeadlines = new HashMap<>();
  private final Map<String, CompletableFuture<ProducerPeer>> handshakesInFlight =
      new ConcurrentHashMap<>();
  private final List<LoadSpec> awaitingPeer = new ArrayList<>();
  private final ExecutorService handshakeThreads;
  private volatile KvMemory memory;
  private volatile KvLayout layout;

  Consumer(ConnectorSettings settings, Transport transport, ConnectorCounters counters) {
    this.settings = settings;
    this.transport = transport;
    this.counters = counters;
    this.handshakeThreads =
        Executors.newCachedThreadPool(
            r -> {
              Thread t = new Thread(r, "kvbridge-handshake-client-" + settings.engineId());
              t.setDaemon(true);
              return t;
            });
  }

  void start(KvMemory kvMemory, KvLayout kvLayout) {
    this.memory = kvMemory;
    this.layout = kvLayout;
  }

  LoadMatch matchRemote(String requestId, TokenIds prompt, TransferParams params) {
    KvLayout kv = requireLayout();
    String problem = null;
    if (params.tokens() > prompt.size()) {
      problem = "tokens " + params.tokens() + " exceed the prompt's " + prompt.size();
    } else if ((long) params.blockIds().size() * kv.tokensPerBlock() != params.tokens()) {
      problem =
          params.blockIds().size()
              + " blocks of "
              + kv.tokensPerBlock()
              + " tokens cannot hold "
              + params.tokens()
              + " tokens";
    } else if (params.blockIds().size() > kv.blockCount()) {
      problem =
          params.blockIds().size() + " blocks exceed this engine's pool of " + kv.blockCount();
    } else if (awaitingAllocation.containsKey(requestId) || loads.containsKey(requestId)) {
      problem = "request " + requestId + " is already loading";
    } else {
      problem = handshakeAddressProblem(params.handshakeAddress()).orElse(null);
    }
    if (problem != null) {
      counters.rejected(RejectedInput.MALFORMED_TRANSFER_PARAMS, problem);
      throw new InvalidTransferParamsException(problem);
    }
    if (!prompt.digest(params.tokens()).equals(params.promptDigest())) {
      String why =
          "prompt_digest is not the digest of this request's first "
              + params.tokens()
              + " prompt tokens: the parameters belong to another prompt";
      counters.rejected(RejectedInput.PROMPT_MISMATCH, requestId + ": " + why);
      throw new InvalidTransferParamsException(why);
    }
    awaitingAllocation.put(requestId, params);
    return new LoadMatch(params.tokens(), true);
  }

  void afterAllocate(String requestId, List<Integer> localBlockIds) {
    TransferParams params = awaitingAllocation.remove(requestId);
    if (params == null) {
      throw new IllegalStateException(
          "afterAllocate for " + requestId + " without an accepted matchRemote");
    }
    int needed = params.blockIds().size();
    if (localBlockIds.size() < needed) {
      forget(params);
      fail(
          requestId,
          localBlockIds,
          "engine allocated " + localBlockIds.size() + " blocks, the load needs " + needed);
      return;
    }
    toStart.add(new LoadSpec(requestId, params, localBlockIds.subList(0, needed)));
  }

  List<LoadSpec> drainToStart() {
    List<LoadSpec> out = List.copyOf(toStart);
    toStart.clear();
    return out;
  }

  /**
   * The producer named by {@code spec}'s parameters, if it is ready now. Runs without the connector
   * lock. A producer in this JVM is handshaken at once; one across the network is handshaken on a
   * background thread, so a slow or silent producer never stalls the engine's step: the spec goes
   * to {@code pending}, and a later {@link #progress} posts or fails it.
   */
  Optional<ProducerPeer> peerFor(LoadSpec spec, List<LoadFailure> failed, List<LoadSpec> pending) {
    TransferParams params = spec.params();
    ProducerPeer known = peers.get(params.producerEngineId());
    if (known != null && known.address().equals(params.handshakeAddress())) {
      return Optional.of(known);
    }
    // matchRemote refused parameters whose address does not parse.
    HandshakeChannel channel =
        HandshakeChannel.forAddress(HandshakeAddress.parse(params.handshakeAddress()));
    if (channel.mayBlock()) {
      handshakesInFlight.computeIfAbsent(
          peerKey(params),
          k ->
              CompletableFuture.supplyAsync(
                  () -> handshakeOrThrow(params.producerEngineId(), params.handshakeAddress()),
                  handshakeThreads));
      pending.add(spec);
      return Optional.empty();
    }
    try {
      return Optional.of(
          handshakeAndRemember(params.producerEngineId(), params.handshakeAddress()));
    } catch (HandshakeFailedException e) {
      failed.add(new LoadFailure(spec.requestId(), spec.localBlockIds(), e.getMessage()));
      return Optional.empty();
    }
  }

  /** Loads whose producer is being handshaken; {@link #progress} resolves them. */
  void awaitPeers(List<LoadSpec> pending) {
    awaitingPeer.addAll(pending);
  }

  /** Checks the lease and posts the read; a load that cannot start is failed. */
  void post(LoadSpec spec, ProducerPeer peer) {
    TransferParams params = spec.params();
    for (int id : params.blockIds()) {
      if (id >= peer.blockCount()) {
        counters.rejected(
            RejectedInput.MALFORMED_TRANSFER_PARAMS,
            "block "
                + id
                + " is outside producer "
                + peer.engineId()
                + "'s pool of "
                + peer.blockCount());
        fail(
            spec,
            "block id "
                + id
                + " is outside the producer's pool of "
                + peer.blockCount()
                + " blocks");
        return;
      }
    }
    long now = settings.clock().nanoTime();
    long producerDeadline =
        Math.max(
            params.deadlineNanos(),
            renewedDeadlines.getOrDefault(leaseKey(params), Long.MIN_VALUE));
    long localDeadline = peer.clockOffset().deadlineToLocal(producerDeadline);
    long left = localDeadline - now;
    if (left < settings.safetyMargin().toNanos()) {
      fail(
          spec,
          "lease ends in "
              + Math.max(0, left / 1_000_000)
              + " ms, inside the safety margin of "
              + settings.safetyMargin().toMillis()
              + " ms; not reading");
      return;
    }
    KvLayout kv = layout;
    KvMemory local = memory;
    // Derived only from what this consumer verified: the block ids P will check against the
    // lease, and the prompt digest matchRemote compared with this request's own prompt.
    byte[] readDigest =
        ReadDigest.of(
            params.requestId(), params.promptDigest(), peer.blockBytes(), params.blockIds());
    List<Descriptor> localPieces = new ArrayList<>(params.blockIds().size());
    List<Descriptor> remotePieces = new ArrayList<>(params.blockIds().size());
    for (int i = 0; i < params.blockIds().size(); i++) {
      localPieces.add(
          new Descriptor(
              local.address() + (long) spec.localBlockIds().get(i) * kv.blockBytes(),
              kv.blockBytes(),
              local.deviceId()));
      remotePieces.add(
          new Descriptor(
              peer.regionAddress() + (long) params.blockIds().get(i) * peer.blockBytes(),
              peer.blockBytes(),
              peer.deviceId()));
    }
    try {
      TransferHandle handle =
          transport.post(
              TransferOp.READ,
              new DescriptorList(local.kind(), localPieces),
              peer.agentName(),
              new DescriptorList(peer.memoryKind(), remotePieces),
              Optional.empty());
      loads.put(spec.requestId(), new Load(spec, peer, handle, readDigest, now, localDeadline));
    } catch (TransportException | IllegalArgumentException e) {
      fail(spec, "read could not be posted: " + e.getMessage());
    }
  }

  /** Polls reads, sends completions, and fails loads whose read or reply is overdue. */
  void progress() {
    resolveAwaitingPeers();
    long now = settings.clock().nanoTime();
    for (Load load : List.copyOf(loads.values())) {
      if (load.awaitingReply) {
        if (now - load.completionSentAt >= settings.replyTimeout().toNanos()) {
          finish(load);
          fail(
              load.spec,
              "no ACK from producer "
                  + load.peer.engineId()
                  + " within "
                  + settings.replyTimeout().toMillis()
                  + " ms");
        }
        continue;
      }
      TransferStatus status;
      try {
        status = transport.status(load.handle);
      } catch (TransportException e) {
        status = new TransferStatus.Failed(e.getMessage());
      }
      if (status instanceof TransferStatus.Done) {
        Optional<String> corrupt = checkContent(load);
        if (corrupt.isPresent()) {
          finish(load);
          counters.rejected(
              RejectedInput.CHECKSUM_MISMATCH, load.spec.requestId() + ": " + corrupt.get());
          fail(load.spec, corrupt.get() + "; not using the read");
        } else {
          sendCompletion(load, now);
        }
      } else if (status instanceof TransferStatus.Failed failed) {
        finish(load);
        fail(load.spec, "read failed: " + failed.reason());
      } else if (now >= load.localDeadline) {
        finish(load);
        fail(load.spec, "read did not finish before the lease deadline; its bytes are not trusted");
      }
    }
  }

  void onReply(String fromAgent, ProtocolMessage reply) {
    LeaseRef ref =
        reply instanceof ProtocolMessage.Ack a ? a.lease() : ((ProtocolMessage.Nack) reply).lease();
    Load load = awaitingReply.get(replyKey(fromAgent, ref.requestId()));
    if (load == null || !load.spec.params().leaseToken().equals(ref.token())) {
      counters.rejected(
          RejectedInput.UNEXPECTED_REPLY,
          reply.getClass().getSimpleName()
              + " for "
              + ref.requestId()
              + " from agent "
              + fromAgent);
      return;
    }
    finish(load);
    if (reply instanceof ProtocolMessage.Nack nack) {
      fail(
          load.spec,
          "producer "
              + load.peer.engineId()
              + " refused the read ("
              + nack.reason()
              + "); the blocks may have been freed");
      return;
    }
    received.add(load.spec.requestId());
    counters.transferCompleted(
        load.spec.requestId(), load.handle.bytes(), settings.clock().nanoTime() - load.startedAt);
  }

  /** Records the deadlines P confirmed for leases this consumer renewed. */
  void onRenewed(String fromAgent, ProtocolMessage.Renewed renewed) {
    Optional<ProducerPeer> peer =
        peers.values().stream().filter(p -> p.agentName().equals(fromAgent)).findFirst();
    for (ProtocolMessage.Renewal renewal : renewed.renewals()) {
      LeaseRef ref = renewal.lease();
      String key = peer.map(p -> leaseKey(p.engineId(), ref.requestId())).orElse("");
      String asked = heartbeated.get(key);
      if (asked == null || !asked.equals(ref.token())) {
        counters.rejected(
            RejectedInput.UNEXPECTED_REPLY,
            "renewal of " + ref.requestId() + " from agent " + fromAgent);
        continue;
      }
      renewedDeadlines.merge(key, renewal.deadlineNanos(), Math::max);
      counters.renewalConfirmed();
      for (Load load : loads.values()) {
        if (load.peer.agentName().equals(fromAgent)
            && load.spec.params().requestId().equals(ref.requestId())) {
          load.localDeadline =
              Math.max(
                  load.localDeadline,
                  load.peer.clockOffset().deadlineToLocal(renewal.deadlineNanos()));
        }
      }
    }
  }

  /** Renews every lease this consumer still means to read, one message per producer. */
  void sendHeartbeats() {
    Map<String, List<LeaseRef>> byProducer = new HashMap<>();
    for (TransferParams p : awaitingAllocation.values()) {
      add(byProducer, p);
    }
    for (LoadSpec spec : toStart) {
      add(byProducer, spec.params());
    }
    for (Load load : loads.values()) {
      if (!load.awaitingReply) {
        add(byProducer, load.spec.params());
      }
    }
    byProducer.forEach(
        (engine, refs) -> {
          ProducerPeer peer = peers.get(engine);
          if (peer == null) {
            return;
          }
          refs.forEach(ref -> heartbeated.put(leaseKey(engine, ref.requestId()), ref.token()));
          for (int from = 0; from < refs.size(); from += ProtocolMessage.MAX_HEARTBEAT_LEASES) {
            List<LeaseRef> chunk =
                refs.subList(
                    from, Math.min(refs.size(), from + ProtocolMessage.MAX_HEARTBEAT_LEASES));
            try {
              transport.notify(
                  peer.agentName(),
                  ProtocolMessage.encode(
                      new ProtocolMessage.Heartbeat(settings.engineId(), chunk)));
            } catch (TransportException e) {
              LOG.log(Level.WARNING, "heartbeat to " + engine + " failed: " + e.getMessage());
            }
          }
        });
  }

  Set<String> drainReceived() {
    Set<String> out = Set.copyOf(received);
    received.clear();
    return out;
  }

  List<LoadFailure> drainFailures() {
    List<LoadFailure> out = List.copyOf(failures);
    failures.clear();
    return out;
  }

  void addFailures(List<LoadFailure> failed) {
    for (LoadFailure f : failed) {
      counters.transferFailed(f.requestId(), f.reason());
      failures.add(f);
    }
  }

  int inFlight() {
    return loads.size() + awaitingPeer.size();
  }

  Set<String> knownProducers() {
    return Set.copyOf(peers.keySet());
  }

  void close() {
    for (Load load : List.copyOf(loads.values())) {
      finish(load);
      fail(load.spec, "connector closed");
    }
    for (LoadSpec spec : List.copyOf(awaitingPeer)) {
      fail(spec, "connector closed");
    }
    awaitingPeer.clear();
    handshakeThreads.shutdownNow();
  }

  /** Posts or fails the loads whose producer's handshake has finished. */
  private void resolveAwaitingPeers() {
    if (awaitingPeer.isEmpty()) {
      return;
    }
    for (LoadSpec spec : List.copyOf(awaitingPeer)) {
      CompletableFuture<ProducerPeer> handshake = handshakesInFlight.get(peerKey(spec.params()));
      if (handshake != null && !handshake.isDone()) {
        continue;
      }
      awaitingPeer.remove(spec);
      ProducerPeer peer =
          handshake == null || handshake.isCompletedExceptionally() ? null : handshake.join();
      if (peer == null) {
        // The handshake failed (its reason was counted and logged) or was dropped: a later one
        // for the same producer starts afresh.
        fail(spec, failureOf(handshake));
      } else {
        post(spec, peer);
      }
    }
    handshakesInFlight.values().removeIf(CompletableFuture::isDone);
  }

  private static String failureOf(CompletableFuture<ProducerPeer> handshake) {
    if (handshake == null) {
      return "handshake with the producer was abandoned";
    }
    try {
      handshake.join();
      return "handshake with the producer produced no peer";
    } catch (CompletionException | java.util.concurrent.CancellationException e) {
      Throwable cause = e.getCause() == null ? e : e.getCause();
      return cause.getMessage();
    }
  }

  private ProducerPeer handshakeOrThrow(String engineId, String address) {
    try {
      return handshakeAndRemember(engineId, address);
    } catch (HandshakeFailedException e) {
      throw new CompletionException(e);
    }
  }

  private ProducerPeer handshakeAndRemember(String engineId, String address)
      throws HandshakeFailedException {
    try {
      ProducerPeer peer = handshake(engineId, address);
      peers.put(peer.engineId(), peer);
      return peer;
    } catch (HandshakeFailedException e) {
      counters.rejected(RejectedInput.HANDSHAKE_REFUSED, e.getMessage());
      throw e;
    }
  }

  /** Why {@code address} is not a handshake address, if it is not. */
  private static Optional<String> handshakeAddressProblem(String address) {
    try {
      HandshakeAddress.parse(address);
      return Optional.empty();
    } catch (IllegalArgumentException e) {
      return Optional.of("handshake_address " + e.getMessage());
    }
  }

  private static String peerKey(TransferParams params) {
    return params.producerEngineId() + '\u0000' + params.handshakeAddress();
  }

  /** Compares each block read with the checksum P recorded at grant; names the first mismatch. */
  private Optional<String> checkContent(Load load) {
    TransferParams p = load.spec.params();
    KvMemory local = memory;
    int blockBytes = layout.blockBytes();
    for (int i = 0; i < p.blockIds().size(); i++) {
      int actual =
          p.checksumScheme()
              .checksum(local, (long) load.spec.localBlockIds().get(i) * blockBytes, blockBytes);
      int expected = p.blockChecksums().get(i);
      if (actual != expected) {
        return Optional.of(
            "block "
                + p.blockIds().get(i)
                + " of producer "
                + p.producerEngineId()
                + " arrived with "
                + p.checksumScheme().wireName()
                + " "
                + Integer.toHexString(actual)
                + ", the lease recorded "
                + Integer.toHexString(expected));
      }
    }
    return Optional.empty();
  }

  private void sendCompletion(Load load, long now) {
    try {
      transport.release(load.handle);
    } catch (TransportException e) {
      LOG.log(Level.DEBUG, "releasing a finished read: " + e.getMessage());
    }
    TransferParams p = load.spec.params();
    LeaseRef ref = new LeaseRef(p.requestId(), p.leaseToken());
    try {
      transport.notify(
          load.peer.agentName(),
          ProtocolMessage.encode(
              new ProtocolMessage.Completion(ref, settings.engineId(), load.readDigest)));
    } catch (TransportException e) {
      loads.remove(load.spec.requestId());
      fail(
          load.spec,
          "could not send the completion to " + load.peer.engineId() + ": " + e.getMessage());
      return;
    }
    load.awaitingReply = true;
    load.completionSentAt = now;
    awaitingReply.put(replyKey(load.peer.agentName(), p.requestId()), load);
  }

  /** Removes a load from every index and releases its transfer if still posted. */
  private void finish(Load load) {
    loads.remove(load.spec.requestId());
    forget(load.spec.params());
    if (load.awaitingReply) {
      awaitingReply.remove(replyKey(load.peer.agentName(), load.spec.params().requestId()));
      return;
    }
    try {
      transport.release(load.handle);
    } catch (TransportException e) {
      LOG.log(
          Level.WARNING, "releasing the read of " + load.spec.requestId() + ": " + e.getMessage());
    }
  }

  private void fail(LoadSpec spec, String reason) {
    forget(spec.params());
    fail(spec.requestId(), spec.localBlockIds(), reason);
  }

  private void forget(TransferParams params) {
    String key = leaseKey(params);
    heartbeated.remove(key);
    renewedDeadlines.remove(key);
  }

  private static String leaseKey(TransferParams params) {
    return leaseKey(params.producerEngineId(), params.requestId());
  }

  private static String leaseKey(String producerEngineId, String producerRequestId) {
    return producerEngineId + '\u0000' + producerRequestId;
  }

  private void fail(String requestId, List<Integer> blocks, String reason) {
    LOG.log(Level.WARNING, "load of {0} failed: {1}", requestId, reason);
    addFailures(List.of(new LoadFailure(requestId, blocks, reason)));
  }

  private ProducerPeer handshake(String engineId, String address) throws HandshakeFailedException {
    KvLayout kv = requireLayout();
    byte[] request =
        Handshake.encode(
            new Handshake.Request(
                settings.engineId(), kv.fingerprint(), transport.localMetadata()));
    long sent = settings.clock().nanoTime();
    Handshake.Response response;
    try {
      HandshakeAddress parsed = HandshakeAddress.parse(address);
      response =
          Handshake.decodeResponse(
              HandshakeChannel.forAddress(parsed)
                  .exchange(parsed, greeting -> request, settings.handshakeTimeout()));
    } catch (IOException | IllegalArgumentException e) {
      throw new HandshakeFailedException(
          "handshake with " + engineId + " at " + address + " failed: " + e.getMessage());
    } catch (MalformedMessageException e) {
      throw new HandshakeFailedException(
          "producer at " + address + " answered a malformed handshake: " + e.getMessage());
    }
    long receivedAt = settings.clock().nanoTime();
    if (response instanceof Handshake.Refused refused) {
      throw new HandshakeFailedException(
          "producer " + engineId + " refused the handshake: " + refused.reason());
    }
    Handshake.Accepted accepted = (Handshake.Accepted) response;
    if (!accepted.producerEngineId().equals(engineId)) {
      throw new HandshakeFailedException(
          "transfer params name producer "
              + engineId
              + " but "
              + address
              + " answers as "
              + accepted.producerEngineId());
    }
    if (accepted.blockBytes() != kv.blockBytes()) {
      throw new HandshakeFailedException(
          "producer "
              + engineId
              + " has blocks of "
              + accepted.blockBytes()
              + " bytes, this engine "
              + kv.blockBytes());
    }
    String agent;
    try {
      agent = transport.loadRemoteMetadata(accepted.producerMetadata());
    } catch (TransportException e) {
      throw new HandshakeFailedException(
          "producer " + engineId + " metadata rejected: " + e.getMessage());
    }
    ClockOffset offset = ClockOffset.estimate(sent, accepted.clockSampleNanos(), receivedAt);
    LOG.log(
        Level.INFO,
        "handshake with {0} at {1}: agent {2}, clock offset {3} ns (±{4} ns)",
        engineId,
        address,
        agent,
        offset.offsetNanos(),
        offset.uncertaintyNanos());
    return new ProducerPeer(
        engineId,
        address,
        agent,
        accepted.blockCount(),
        accepted.blockBytes(),
        accepted.regionAddress(),
        accepted.deviceId(),
        accepted.memoryKind(),
        offset);
  }

  private KvLayout requireLayout() {
    KvLayout kv = layout;
    if (kv == null) {
      throw new IllegalStateException("registerKvCache must be called before loading");
    }
    return kv;
  }

  private static void add(Map<String, List<LeaseRef>> byProducer, TransferParams p) {
    byProducer
        .computeIfAbsent(p.producerEngineId(), k -> new ArrayList<>())
        .add(new LeaseRef(p.requestId(), p.leaseToken()));
  }

  private static String replyKey(String agent, String producerRequestId) {
    return agent + '\u0000' + producerRequestId;
  }

  /** A read in flight or awaiting P's answer. */
  private static final class Load {
    final LoadSpec spec;
    final ProducerPeer peer;
    final TransferHandle handle;
    final byte[] readDigest;
    final long startedAt;
    long localDeadline;
    boolean awaitingReply;
    long completionSentAt;

    Load(
        LoadSpec spec,
        ProducerPeer peer,
        TransferHandle handle,
        byte[] readDigest,
        long startedAt,
        long localDeadline) {
      this.spec = spec;
      this.peer = peer;
      this.handle = handle;
      this.readDigest = readDigest;
      this.startedAt = startedAt;
      this.localDeadline = localDeadline;
    }
  }

  /** A handshake that did not produce a usable peer. */
  private static final class HandshakeFailedException extends Exception {
    private static final long serialVersionUID = 1L;

    HandshakeFailedException(String message) {
      super(message);
    }
  }
}
