package io.kvbridge.discovery.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvbridge.fake.FakeTransportProvider;
import io.kvbridge.layout.KvLayout;
import io.kvbridge.runtime.ConnectorRegistry;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.FinishDecision;
import io.kvbridge.spi.FinishedRequest;
import io.kvbridge.spi.FinishedTransfers;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.LoadFailure;
import io.kvbridge.spi.LoadMatch;
import io.kvbridge.spi.Role;
import io.kvbridge.spi.TokenIds;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.tck.Prompts;
import io.kvbridge.transfer.KvMemory;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

/**
 * An engine for tests on the in-JVM fake transport, registered through an {@link EtcdDiscovery} as
 * the starter wires it: its connector finds peers through that discovery and is told by it when a
 * peer is gone. Steps are driven by the test, as an engine would drive them.
 */
final class Engine implements AutoCloseable {

  static final KvLayout LAYOUT = KvLayout.opaque("etcd-test/fp16", 4, 256, 32);

  /** Long enough that no lease, handshake or reply times out during a test. */
  private static final Duration PATIENT = Duration.ofSeconds(60);

  final KvConnector connector;

  /** The connector as its provider created it, before discovery wrapped it. */
  final KvConnector unregistered;

  final KvMemory memory;
  final Set<String> received = new HashSet<>();
  final Set<String> sent = new HashSet<>();
  final Map<String, LoadFailure> failed = new HashMap<>();
  private final Random random = new Random(7);

  private Engine(KvConnector connector, KvConnector unregistered) {
    this.connector = connector;
    this.unregistered = unregistered;
    this.memory = connector.worker().allocateKvCache(LAYOUT);
    connector.worker().registerKvCache(memory, LAYOUT);
  }

  /** Starts engine {@code engineId} on {@code fabric}, registered through {@code discovery}. */
  static Engine start(
      String engineId, Role role, String fabric, EtcdDiscovery discovery, EngineLoad load) {
    return start(engineId, role, fabric, discovery, load, EngineAttributes.NONE);
  }

  /** Starts engine {@code engineId} as above, its registration carrying {@code attributes}. */
  static Engine start(
      String engineId,
      Role role,
      String fabric,
      EtcdDiscovery discovery,
      EngineLoad load,
      EngineAttributes attributes) {
    ConnectorSettings settings =
        ConnectorSettings.builder(FakeTransportProvider.TYPE, engineId)
            .role(role)
            .peerDirectory(discovery)
            .leaseTerms(PATIENT, PATIENT.multipliedBy(2))
            .heartbeatInterval(Duration.ofSeconds(10))
            .replyTimeout(PATIENT)
            .handshakeTimeout(PATIENT)
            .properties(Map.of(FakeTransportProvider.FABRIC, fabric))
            .build();
    KvConnector raw = ConnectorRegistry.of(List.of(new FakeTransportProvider())).create(settings);
    return new Engine(discovery.register(raw, load, attributes), raw);
  }

  String id() {
    return connector.settings().engineId();
  }

  /** One engine step: what getFinished reports is recorded. */
  Engine drain() {
    FinishedTransfers finished = connector.worker().getFinished(Set.of());
    received.addAll(finished.doneReceiving());
    sent.addAll(finished.doneSending());
    finished.failedLoads().forEach(f -> failed.put(f.requestId(), f));
    return this;
  }

  /** Finishes a prefill of {@code blocks} on this producer; returns the parameters for D. */
  TransferParams prefill(String requestId, List<Integer> blocks) {
    int tokens = blocks.size() * LAYOUT.tokensPerBlock();
    FinishDecision decision =
        connector
            .scheduler()
            .requestFinished(
                new FinishedRequest(
                    requestId, blocks, Prompts.of(requestId, tokens), tokens, false, true));
    assertThat(decision.delayFree()).isTrue();
    return decision.params().orElseThrow();
  }

  /**
   * Asks this consumer about {@code params} on every step of both engines until the producer
   * confirmed the lease; then lends {@code localBlocks} to the load without starting the read, so
   * the load waits on the producer.
   */
  void confirm(
      Engine producer, String requestId, TransferParams params, List<Integer> localBlocks) {
    TokenIds prompt = Prompts.of(params.requestId(), params.tokens());
    LoadMatch[] match = {connector.scheduler().matchRemote(requestId, prompt, 0, params)};
    await()
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(2))
        .until(
            () -> {
              if (match[0] instanceof LoadMatch.Pending) {
                producer.drain();
                drain();
                match[0] = connector.scheduler().matchRemote(requestId, prompt, 0, params);
              }
              return !(match[0] instanceof LoadMatch.Pending);
            });
    assertThat(match[0]).isInstanceOf(LoadMatch.Ready.class);
    connector.scheduler().afterAllocate(requestId, localBlocks);
  }

  /** Loads {@code params} into {@code localBlocks} and steps both engines until it ends. */
  void load(Engine producer, String requestId, TransferParams params, List<Integer> localBlocks) {
    confirm(producer, requestId, params, localBlocks);
    connector.worker().startLoad(connector.scheduler().buildStepMetadata());
    await()
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(2))
        .until(
            () -> {
              drain();
              producer.drain();
              return received.contains(requestId) || failed.containsKey(requestId);
            });
  }

  Map<Integer, byte[]> fill(List<Integer> blocks) {
    Map<Integer, byte[]> written = new HashMap<>();
    for (int block : blocks) {
      byte[] bytes = new byte[LAYOUT.blockBytes()];
      random.nextBytes(bytes);
      memory.write((long) block * LAYOUT.blockBytes(), ByteBuffer.wrap(bytes));
      written.put(block, bytes);
    }
    return written;
  }

  byte[] block(int block) {
    byte[] bytes = new byte[LAYOUT.blockBytes()];
    memory.read((long) block * LAYOUT.blockBytes(), ByteBuffer.wrap(bytes));
    return bytes;
  }

  @Override
  public void close() {
    connector.close();
    memory.close();
  }
}
