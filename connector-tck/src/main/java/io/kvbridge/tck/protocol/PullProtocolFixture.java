package io.kvbridge.tck.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.kvbridge.integrity.ReadDigest;
import io.kvbridge.layout.KvLayout;
import io.kvbridge.lease.LeaseTerms;
import io.kvbridge.observe.CompositeConnectorObserver;
import io.kvbridge.observe.ConnectorObserver;
import io.kvbridge.observe.RejectedInput;
import io.kvbridge.runtime.ConnectorRegistry;
import io.kvbridge.runtime.PullConnector;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.ConsumerStatus;
import io.kvbridge.spi.FinishDecision;
import io.kvbridge.spi.FinishedRequest;
import io.kvbridge.spi.FinishedTransfers;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.LoadFailure;
import io.kvbridge.spi.LoadMatch;
import io.kvbridge.spi.PeerDirectory;
import io.kvbridge.spi.ProducerStatus;
import io.kvbridge.spi.Role;
import io.kvbridge.spi.TokenIds;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.tck.ConnectorUnderTest;
import io.kvbridge.tck.Messages;
import io.kvbridge.tck.Prompts;
import io.kvbridge.time.ManualClock;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.Transport;
import io.kvbridge.wire.HandshakeChannel;
import io.kvbridge.wire.LeaseRef;
import io.kvbridge.wire.ProtocolMessage;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * The engines every pull-protocol test drives, and the steps it drives them by: a producer and a
 * consumer of the connector under test, started before each test through the SPI exactly as an
 * engine starts them, with an injected clock; more engines, restarts, loads, and messages forged on
 * the consumer's transport. The suite's groups extend it; so may a connector's own tests of the
 * protocol.
 *
 * <p>Tests that forge protocol messages reach the transport through {@link
 * PullConnector#transport()}, so the connectors under test are {@link PullConnector}s.
 */
public abstract class PullProtocolFixture {

  /** The producer's layout: 32 blocks of 1 KiB, 4 tokens each. */
  protected static final KvLayout PRODUCER_LAYOUT = KvLayout.opaque("conformance/fp16", 4, 256, 32);

  /** The consumer's pool is larger; block size and model match. */
  protected static final KvLayout CONSUMER_LAYOUT = KvLayout.opaque("conformance/fp16", 4, 256, 64);

  protected static final Duration LEASE = Duration.ofSeconds(30);
  protected static final Duration MAX_LIFETIME = Duration.ofSeconds(120);
  protected static final Duration SAFETY_MARGIN = Duration.ofSeconds(2);
  protected static final Duration HANDSHAKE_TIMEOUT = Duration.ofSeconds(3);

  /** The connector under test. */
  final ConnectorUnderTest underTest;

  protected final ManualClock clock = new ManualClock();
  private final Random random = new Random(42);
  private final List<Node> nodes = new ArrayList<>();
  private final List<RecordingTransport> unclaimedRecordings = new ArrayList<>();
  final List<HandshakeChannel.Server> forgers = new ArrayList<>();
  private int warmups;
  protected Node producer;
  protected Node consumer;

  /** The peer directory of the engines started from now on. */
  protected PeerDirectory directory = PeerDirectory.NONE;

  /** How many loads from one producer the engines started from now on hold; 0: the default. */
  protected int maxLoadsPerProducer = 0;

  /** How many distinct consumers must read a lease of the producers started from now on. */
  protected int acksRequired = 1;

  /** The observer of the engines started from now on. */
  protected ConnectorObserver observer = ConnectorObserver.NONE;

  /**
   * The progress interval of the engines started from now on: none by default, so that the suites
   * drive every engine step by step ({@link ProgressConformance} runs the thread).
   */
  protected Duration progressInterval = Duration.ZERO;

  /** Runs against {@code connector}, which starts every engine of the test. */
  protected PullProtocolFixture(ConnectorUnderTest connector) {
    this.underTest = Objects.requireNonNull(connector, "connector");
  }

  /**
   * Creates the connector under test for {@code settings}, as engines get it, with each rank's
   * transport wrapped in one that passes every call through and counts how bytes move (the
   * prepared-read tests read the counts).
   */
  KvConnector newConnector(ConnectorSettings settings) {
    return ConnectorRegistry.of(List.of(underTest.provider())).create(settings, this::recorded);
  }

  private Transport recorded(Transport transport) {
    RecordingTransport recording = new RecordingTransport(transport);
    unclaimedRecordings.add(recording);
    return recording;
  }

  @BeforeEach
  void startEngines() {
    producer = node("prefill", Role.PRODUCER, PRODUCER_LAYOUT);
    consumer = node("decode", Role.CONSUMER, CONSUMER_LAYOUT);
  }

  @AfterEach
  void stopEngines() {
    forgers.forEach(HandshakeChannel.Server::close);
    for (Node node : nodes) {
      node.connector.close();
      node.memory.close();
    }
  }

  /** Starts an engine with its own KV cache; closed after the test. */
  protected Node node(String name, Role role, KvLayout layout) {
    return start(name + "-" + UUID.randomUUID().toString().substring(0, 8), role, layout);
  }

  /**
   * Stops {@code node} as a process that exits would, and starts it again under the same engine id
   * with a new incarnation and a fresh KV cache.
   */
  protected Node restart(Node node) {
    nodes.remove(node);
    node.connector.close();
    node.memory.close();
    return start(
        node.connector.settings().engineId(), node.connector.settings().role(), node.layout);
  }

  private Node start(String engineId, Role role, KvLayout layout) {
    return start(engineId, role, layout, null);
  }

  /** Starts an engine that knows the deployment secret {@code secret} ({@code null}: none). */
  protected Node node(String name, Role role, KvLayout layout, String secret) {
    return start(name + "-" + UUID.randomUUID().toString().substring(0, 8), role, layout, secret);
  }

  private Node start(String engineId, Role role, KvLayout layout, String secret) {
    Set<String> confirmed = ConcurrentHashMap.newKeySet();
    ConnectorObserver recordConfirmations =
        new ConnectorObserver() {
          @Override
          public void leaseConfirmed(String requestId, long nanos) {
            confirmed.add(requestId);
          }
        };
    ConnectorSettings.Builder builder =
        ConnectorSettings.builder(underTest.provider().type(), engineId)
            .role(role)
            .handshakeSecret(secret)
            .peerDirectory(directory)
            .observer(CompositeConnectorObserver.of(List.of(observer, recordConfirmations)))
            .leaseTerms(new LeaseTerms(LEASE, MAX_LIFETIME))
            .safetyMargin(SAFETY_MARGIN)
            .heartbeatInterval(Duration.ofSeconds(5))
            .replyTimeout(Duration.ofSeconds(5))
            .handshakeTimeout(HANDSHAKE_TIMEOUT)
            .handshakeAddress(underTest.handshakeAddress())
            .acksRequired(acksRequired)
            .clock(clock)
            .progressInterval(progressInterval)
            .properties(underTest.connectorProperties());
    if (maxLoadsPerProducer > 0) {
      builder.maxLoadsPerProducer(maxLoadsPerProducer);
    }
    ConnectorSettings settings = builder.build();
    KvConnector connector = newConnector(settings);
    List<RecordingTransport> recordings = List.copyOf(unclaimedRecordings);
    unclaimedRecordings.clear();
    KvMemory memory = connector.worker().allocateKvCache(layout);
    connector.worker().registerKvCache(memory, layout);
    Node node = new Node(connector, memory, layout, recordings, confirmed);
    nodes.add(node);
    return node;
  }

  /**
   * {@code params} with some fields replaced, given as alternating snake_case keys and values, read
   * back through {@link TransferParams#fromMap} as a consumer reads what the router hands it.
   */
  protected static TransferParams altered(TransferParams params, Object... keysAndValues) {
    Map<String, Object> map = new HashMap<>(params.toMap());
    for (int i = 0; i < keysAndValues.length; i += 2) {
      map.put((String) keysAndValues[i], keysAndValues[i + 1]);
    }
    return TransferParams.fromMap(map);
  }

  /**
   * Runs one full load so the consumer knows the producer; returns its parameters. The first call's
   * requests are {@code p-warmup} and {@code d-warmup}; each later call's ids end in its number
   * ({@code -2}, ...), so a consumer that served an earlier warm-up (say before the producer
   * restarted) cannot pass this one's waits on that one's confirmation and receipt.
   */
  protected TransferParams establishPeer() {
    warmups++;
    String suffix = warmups == 1 ? "" : "-" + warmups;
    TransferParams params = prefill("p-warmup" + suffix, List.of(0));
    load("d-warmup" + suffix, params, List.of(0));
    settle("d-warmup" + suffix);
    assertThat(consumer.received).contains("d-warmup" + suffix);
    awaitTrue(() -> producer.drain().sent.contains("p-warmup" + suffix));
    return params;
  }

  /** Finishes a prefill on the producer and returns the parameters for the consumer. */
  protected TransferParams prefill(String requestId, List<Integer> blocks) {
    FinishDecision decision =
        producer
            .connector
            .scheduler()
            .requestFinished(
                new FinishedRequest(
                    requestId,
                    blocks,
                    Prompts.of(requestId, blocks.size() * PRODUCER_LAYOUT.tokensPerBlock()),
                    blocks.size() * PRODUCER_LAYOUT.tokensPerBlock(),
                    false,
                    true));
    assertThat(decision.delayFree()).isTrue();
    return decision.params().orElseThrow();
  }

  /** Loads {@code params} on the consumer for the prompt they were granted for. */
  protected void load(String requestId, TransferParams params, List<Integer> localBlocks) {
    load(consumer, requestId, params, Prompts.of(params.requestId(), params.tokens()), localBlocks);
  }

  /**
   * Loads {@code params} on {@code node} as an engine does: asks until the producer confirmed the
   * lease, then lends the blocks and starts the read. A refusal is recorded as the load's failure.
   */
  protected void load(
      Node node, String requestId, TransferParams params, TokenIds prompt, List<Integer> blocks) {
    if (confirm(node, requestId, params, prompt) && !node.failed.containsKey(requestId)) {
      node.connector.scheduler().afterAllocate(requestId, blocks);
      node.connector.worker().startLoad(node.connector.scheduler().buildStepMetadata());
    }
  }

  /**
   * Asks {@code node} about the load on every step of both engines until the answer is not {@link
   * LoadMatch#PENDING}, then, if it is {@link LoadMatch.Ready} with tokens to read, steps both
   * until the producer confirmed the lease (a handshaken producer's CONFIRM is sent with the first
   * answer, which is ready at once) or the load failed; returns whether the answer was ready. An
   * {@link LoadMatch.Unavailable} answer is recorded in {@code node.failed} with no blocks.
   */
  protected boolean confirm(Node node, String requestId, TransferParams params, TokenIds prompt) {
    return confirm(node, requestId, params, prompt, 0);
  }

  /** {@link #confirm} for an engine that holds the first {@code localTokens} of the prompt. */
  protected boolean confirm(
      Node node, String requestId, TransferParams params, TokenIds prompt, int localTokens) {
    LoadMatch[] match = {
      node.connector.scheduler().matchRemote(requestId, prompt, localTokens, params)
    };
    awaitTrue(
        () -> {
          if (match[0] instanceof LoadMatch.Pending) {
            producer.drain();
            node.drain();
            match[0] =
                node.connector.scheduler().matchRemote(requestId, prompt, localTokens, params);
          }
          return !(match[0] instanceof LoadMatch.Pending);
        });
    if (match[0] instanceof LoadMatch.Unavailable unavailable) {
      node.failed.put(requestId, new LoadFailure(requestId, List.of(), unavailable.reason()));
      return false;
    }
    if (((LoadMatch.Ready) match[0]).externalTokens() > 0) {
      awaitTrue(
          () -> {
            producer.drain();
            node.drain();
            return node.confirmed.contains(requestId) || node.failed.containsKey(requestId);
          });
    }
    return true;
  }

  /** Steps both engines until the consumer's request was received or failed. */
  protected void settle(String consumerRequestId) {
    settle(consumer, consumerRequestId);
  }

  /** Steps {@code node} and the producer until {@code node}'s request was received or failed. */
  protected void settle(Node node, String consumerRequestId) {
    awaitTrue(
        () -> {
          node.drain();
          producer.drain();
          return node.received.contains(consumerRequestId)
              || node.failed.containsKey(consumerRequestId);
        });
  }

  protected void awaitTrue(BooleanSupplier condition) {
    await()
        .atMost(underTest.patience())
        .pollInterval(Duration.ofMillis(2))
        .until(condition::getAsBoolean);
  }

  void awaitRejected(Node node, RejectedInput kind) {
    awaitTrue(
        () -> {
          node.drain();
          return node.connector.status().rejected().getOrDefault(kind, 0L) >= 1;
        });
  }

  /**
   * The read digest of reading {@code params}' lease from the producer into the consumer (one rank
   * each, {@link #PRODUCER_LAYOUT} and {@link #CONSUMER_LAYOUT}), skipping {@code skipTokens}.
   */
  protected static ReadDigest readDigestOf(TransferParams params, int skipTokens) {
    return ReadDigest.of(
        ReadDigest.binding(
            params.requestId(), params.promptDigest(), params.tokens(), params.blockIds()),
        ReadDigest.shape(List.of(PRODUCER_LAYOUT), List.of(CONSUMER_LAYOUT)),
        skipTokens);
  }

  /** The consumer's COMPLETION of {@code params}' lease, skipping {@code skipTokens}. */
  ProtocolMessage completionOf(TransferParams params, int skipTokens) {
    return new ProtocolMessage.Completion(
        new LeaseRef(params.requestId(), params.leaseToken()),
        consumerId(),
        readDigestOf(params, skipTokens),
        skipTokens);
  }

  String consumerId() {
    return consumer.connector.settings().engineId();
  }

  void sendFromConsumer(ProtocolMessage message) {
    consumerTransport().notify(producerTransport().agentName(), ProtocolMessage.encode(message));
  }

  void sendFromConsumer(LeaseRef lease) {
    consumerTransport()
        .notify(
            producerTransport().agentName(),
            Messages.completion(lease, consumer.connector.settings().engineId()));
  }

  protected Transport producerTransport() {
    return ((PullConnector) producer.connector).transport();
  }

  protected Transport consumerTransport() {
    return ((PullConnector) consumer.connector).transport();
  }

  /** One engine under test: its connector, its KV memory and what its steps reported. */
  protected final class Node {
    final KvConnector connector;
    final KvMemory memory;
    final KvLayout layout;
    final List<RecordingTransport> recordings;
    final Set<String> received = new HashSet<>();
    final Set<String> sent = new HashSet<>();
    final Map<String, Integer> sentCount = new HashMap<>();
    final Map<String, LoadFailure> failed = new HashMap<>();

    /** The consumer requests whose leases their producers confirmed (CONFIRMED arrived). */
    final Set<String> confirmed;

    Node(
        KvConnector connector,
        KvMemory memory,
        KvLayout layout,
        List<RecordingTransport> recordings,
        Set<String> confirmed) {
      this.connector = connector;
      this.memory = memory;
      this.layout = layout;
      this.recordings = recordings;
      this.confirmed = confirmed;
    }

    /** A count of this engine's transports, summed over its ranks. */
    int count(java.util.function.ToIntFunction<RecordingTransport> what) {
      assumeTrue(!recordings.isEmpty(), "this suite's connectors were created without recording");
      return recordings.stream().mapToInt(what).sum();
    }

    /** The READs this engine posted so far, described or prepared, over its ranks. */
    int readsPosted() {
      return count(r -> r.describedPosts.get() + r.preparedPosts.get());
    }

    /** One engine step: what getFinished reports is recorded. */
    Node drain() {
      FinishedTransfers finished = connector.worker().getFinished(Set.of());
      received.addAll(finished.doneReceiving());
      sent.addAll(finished.doneSending());
      finished.doneSending().forEach(id -> sentCount.merge(id, 1, Integer::sum));
      finished.failedLoads().forEach(f -> failed.put(f.requestId(), f));
      return this;
    }

    Map<Integer, byte[]> fill(List<Integer> blocks) {
      Map<Integer, byte[]> written = new HashMap<>();
      for (int block : blocks) {
        byte[] bytes = new byte[layout.blockBytes()];
        random.nextBytes(bytes);
        memory.write((long) block * layout.blockBytes(), ByteBuffer.wrap(bytes));
        written.put(block, bytes);
      }
      return written;
    }

    /** The producer's part of this engine's status. */
    ProducerStatus producerPart() {
      return connector.status().producer().orElseThrow();
    }

    /** The consumer's part of this engine's status. */
    ConsumerStatus consumerPart() {
      return connector.status().consumer().orElseThrow();
    }

    byte[] block(int block) {
      byte[] bytes = new byte[layout.blockBytes()];
      memory.read((long) block * layout.blockBytes(), ByteBuffer.wrap(bytes));
      return bytes;
    }
  }
}
