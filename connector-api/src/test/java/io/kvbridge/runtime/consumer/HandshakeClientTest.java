package io.kvbridge.runtime.consumer;

import static io.kvbridge.runtime.consumer.HandshakeFixture.LAYOUT;
import static io.kvbridge.runtime.consumer.HandshakeFixture.freshLocalAddress;
import static io.kvbridge.runtime.consumer.HandshakeFixture.ranks;
import static io.kvbridge.runtime.consumer.HandshakeFixture.serve;
import static io.kvbridge.runtime.consumer.HandshakeFixture.settings;
import static io.kvbridge.runtime.consumer.HandshakeFixture.stubProducer;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.runtime.consumer.HandshakeClient.Resolution;
import io.kvbridge.runtime.consumer.HandshakeFixture.RecordingObserver;
import io.kvbridge.runtime.engine.ConnectorCounters;
import io.kvbridge.runtime.engine.StubTransport;
import io.kvbridge.runtime.producer.HandshakeResponder;
import io.kvbridge.transfer.MemoryKind;
import io.kvbridge.wire.Handshake;
import io.kvbridge.wire.HandshakeChannel;
import io.kvbridge.wire.ProducerHandshake;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class HandshakeClientTest {

  private static final long MS = 1_000_000L;

  /** The producer's clock runs 5 s ahead of the consumer's. */
  private static final long AHEAD = 5_000 * MS;

  private static final long INCARNATION = 0x11;

  /** The consumer's clock; it moves only while the producer answers. */
  private final AtomicLong now = new AtomicLong(1_000 * MS);

  /** How long the producer takes to answer: it samples its clock midway. */
  private final AtomicLong answerTime = new AtomicLong();

  private final RecordingObserver observer = new RecordingObserver();
  private final StubTransport consumerTransport = new StubTransport("c-agent");
  private final HandshakeClient client =
      new HandshakeClient(
          settings("c", 0x22, now::get), ranks(consumerTransport), new ConnectorCounters(observer));
  private final String address = freshLocalAddress();
  private HandshakeChannel.Server server;
  private final List<HandshakeChannel.Server> forgers = new ArrayList<>();

  @AfterEach
  void close() {
    client.close();
    forgers.forEach(HandshakeChannel.Server::close);
    if (server != null) {
      server.close();
    }
  }

  @Test
  void aProducerThatAnswersIsReadyAndItsHandshakeIsReportedWithDurationAndClock() {
    startProducer(INCARNATION);

    Resolution resolution = client.resolve("p", address, INCARNATION);

    assertThat(resolution).isInstanceOf(Resolution.Ready.class);
    ProducerPeer peer = ((Resolution.Ready) resolution).peer();
    assertThat(peer.agentName()).isEqualTo("p-agent");
    assertThat(client.current("p")).contains(peer);
    assertThat(client.byAgent("p-agent")).contains(peer);
    assertThat(observer.events).containsExactly("completed p in 0", "clock p " + AHEAD + " ±1");
    assertThat(consumerTransport.events).containsExactly("load p-agent");
  }

  @Test
  void aProducerNobodyAnswersForFailsWithTheReasonAndIsCountedAsRefused() {
    Resolution resolution = client.resolve("p", address, INCARNATION);

    String reason =
        "handshake with p at " + address + " failed: no engine answers handshakes at " + address;
    assertThat(resolution).isEqualTo(new Resolution.Failed(reason));
    assertThat(observer.events)
        .containsExactly("failed p in 0: " + reason, "rejected HANDSHAKE_REFUSED: " + reason);
  }

  @Test
  void anAddressThatDoesNotParseIsRefusedWithoutAHandshake() {
    Resolution resolution = client.resolve("p", "pigeon://loft", INCARNATION);

    assertThat(resolution).isInstanceOf(Resolution.Failed.class);
    String reason = ((Resolution.Failed) resolution).reason();
    assertThat(reason).contains("pigeon://loft");
    assertThat(observer.events)
        .containsExactly("rejected HANDSHAKE_REFUSED: " + reason, "failed p in 0: " + reason);
  }

  @Test
  void aProducerThatGoesAwayFailsOnlyTheLoadsStartedBeforeIt() {
    long before = client.epoch();

    client.producerGone("p", "its registration expired");

    assertThat(client.epoch()).isEqualTo(before + 1);
    assertThat(client.goneSince("p", before)).contains("its registration expired");
    assertThat(client.goneSince("p", before + 1)).isEmpty();
    assertThat(client.goneSince("q", before)).isEmpty();
  }

  @Test
  void aGoneProducerIsForgottenOnceNoLoadStartedBeforeItRemains() {
    long before = client.epoch();
    client.producerGone("p", "its registration expired");

    client.forgetGoneAtOrBefore(before);
    assertThat(client.goneSince("p", before)).contains("its registration expired");

    client.forgetGoneAtOrBefore(before + 1);
    assertThat(client.goneSince("p", before)).isEmpty();
  }

  @Test
  void aKnownProducerThatGoesAwayHasItsMetadataDropped() {
    startProducer(INCARNATION);
    client.resolve("p", address, INCARNATION);

    client.producerGone("p", "its registration expired");

    assertThat(client.current("p")).isEmpty();
    assertThat(client.byAgent("p-agent")).isEmpty();
    assertThat(consumerTransport.events).containsExactly("load p-agent", "invalidate p-agent");
  }

  @Test
  void aSuspectProducerIsHandshakenAgainAndTheQuickerExchangeHealsItsClock() {
    startProducer(INCARNATION);
    answerTime.set(20 * MS);
    client.resolve("p", address, INCARNATION);
    assertThat(client.current("p").orElseThrow().clock().current().uncertaintyNanos())
        .isEqualTo(10 * MS + 1);
    client.endRound();
    answerTime.set(0);

    client.suspect("p");

    ProducerPeer peer = client.current("p").orElseThrow();
    assertThat(peer.clock().current()).isEqualTo(new ClockOffset(AHEAD, 1));
    assertThat(observer.starting("completed")).hasSize(2);
    assertThat(observer.starting("clock")).last().isEqualTo("clock p " + AHEAD + " ±1");
    // The same incarnation: its metadata stays loaded.
    assertThat(consumerTransport.events).containsExactly("load p-agent");
    assertThat(client.resolve("p", address, INCARNATION)).isEqualTo(new Resolution.Ready(peer));
  }

  @Test
  void suspectingAProducerNeverHandshakenDoesNothing() {
    client.suspect("p");

    assertThat(observer.events).isEmpty();
    assertThat(client.current("p")).isEmpty();
  }

  @Test
  void aSuspectProducerThatNoLongerAnswersIsGoneAndItsMetadataDropped() {
    startProducer(INCARNATION);
    client.resolve("p", address, INCARNATION);
    client.endRound();
    long before = client.epoch();
    server.close();

    client.suspect("p");

    assertThat(client.goneSince("p", before))
        .hasValueSatisfying(
            why ->
                assertThat(why)
                    .isEqualTo(
                        "stopped answering: handshake with p at "
                            + address
                            + " failed: no engine answers handshakes at "
                            + address));
    assertThat(client.current("p")).isEmpty();
    assertThat(consumerTransport.events).containsExactly("load p-agent", "invalidate p-agent");
  }

  @Test
  void aFailedHandshakeWithAProducerNotSuspectedLeavesItKnown() {
    startProducer(INCARNATION);
    ProducerPeer peer = ((Resolution.Ready) client.resolve("p", address, INCARNATION)).peer();
    client.endRound();
    long before = client.epoch();
    server.close();

    // A load granted by another incarnation asks for a new handshake, which fails.
    assertThat(client.resolve("p", address, INCARNATION + 1)).isInstanceOf(Resolution.Failed.class);

    assertThat(client.goneSince("p", before)).isEmpty();
    assertThat(client.current("p")).contains(peer);
  }

  @Test
  void aRestartedProducerHasItsOldAgentDroppedBeforeTheNewOneIsLoaded() {
    startProducer(INCARNATION);
    client.resolve("p", address, INCARNATION);
    client.endRound();
    server.close();
    startProducer(INCARNATION + 1);

    Resolution resolution = client.resolve("p", address, INCARNATION + 1);

    assertThat(resolution).isInstanceOf(Resolution.Ready.class);
    assertThat(((Resolution.Ready) resolution).peer().incarnation()).isEqualTo(INCARNATION + 1);
    assertThat(consumerTransport.events)
        .containsExactly("load p-agent", "invalidate p-agent", "load p-agent");
  }

  @Test
  void aProducerAcrossTheNetworkIsPendingUntilItAnswers() throws Exception {
    CountDownLatch answer = new CountDownLatch(1);
    HandshakeResponder responder = producer(INCARNATION);
    server =
        serve(
            "tcp://127.0.0.1:0",
            "p",
            () -> {
              HandshakeChannel.Conversation real = responder.open();
              return new HandshakeChannel.Conversation() {
                @Override
                public byte[] greeting() {
                  return real.greeting();
                }

                @Override
                public HandshakeChannel.Reply reply(byte[] frame) {
                  try {
                    answer.await(10, TimeUnit.SECONDS);
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                  return real.reply(frame);
                }
              };
            });
    String tcp = server.address().toString();

    assertThat(client.resolve("p", tcp, INCARNATION)).isEqualTo(new Resolution.Pending());
    answer.countDown();

    await().until(() -> !(client.resolve("p", tcp, INCARNATION) instanceof Resolution.Pending));
    assertThat(client.resolve("p", tcp, INCARNATION)).isInstanceOf(Resolution.Ready.class);
  }

  @Test
  void aLoadGrantedByAnEarlierIncarnationOfAProducerAcrossTheNetworkFailsOnItsHandshake() {
    server = serve("tcp://127.0.0.1:0", "p", producer(INCARNATION + 1));
    String tcp = server.address().toString();

    await().until(() -> !(client.resolve("p", tcp, INCARNATION) instanceof Resolution.Pending));

    assertThat(client.resolve("p", tcp, INCARNATION))
        .isEqualTo(
            new Resolution.Failed(
                "the lease was granted by incarnation 11 of producer p, which now answers as"
                    + " incarnation 12: it restarted, and its leases ended with it"));
  }

  @Test
  void aProducerAcrossTheNetworkThatStopsAnsweringIsGoneOnceSuspected() {
    server = serve("tcp://127.0.0.1:0", "p", producer(INCARNATION));
    String tcp = server.address().toString();
    await().until(() -> client.resolve("p", tcp, INCARNATION) instanceof Resolution.Ready);
    client.endRound();
    long before = client.epoch();
    server.close();
    server = null;

    client.suspect("p");

    await().until(() -> client.goneSince("p", before).isPresent());
    assertThat(client.goneSince("p", before).orElseThrow()).startsWith("stopped answering: ");
    assertThat(client.current("p")).isEmpty();
    assertThat(observer.starting("rejected HANDSHAKE_REFUSED: ")).hasSize(1);
    assertThat(observer.failureThreads)
        .singleElement()
        .satisfies(
            t -> {
              assertThat(t.isDaemon()).isTrue();
              assertThat(t.getName()).isEqualTo("kvbridge-handshake-client-c");
            });
  }

  @Test
  void aProducerWhoseKvCannotBeLoadedHereFailsTheHandshake() {
    KvLayout other =
        new KvLayout("other", 2, 3, 2, 4, 0, 4, 8, 16, 64, KvLayout.MemoryOrder.HEAD_MAJOR);
    server =
        serve(
            address,
            "p",
            new ProducerHandshake(
                Optional.empty(),
                request ->
                    new Handshake.Accepted(
                        "p",
                        INCARNATION,
                        0,
                        List.of(
                            new Handshake.Rank(
                                other,
                                List.of(4096L),
                                0,
                                MemoryKind.DRAM,
                                "p-agent".getBytes(UTF_8)))),
                ProducerHandshake.Listener.NONE));

    assertThat(client.resolve("p", address, INCARNATION))
        .isEqualTo(
            new Resolution.Failed("producer p's KV cannot be loaded here: model m vs other"));
    assertThat(consumerTransport.events).isEmpty();
  }

  @Test
  void aHandshakeBeyondThePoolAndItsQueueIsRefusedAtOnce() throws Exception {
    // A producer that takes connections but never greets: every handshake waits.
    try (ServerSocket silent = new ServerSocket(0, 256, InetAddress.getLoopbackAddress())) {
      String tcp = "tcp://127.0.0.1:" + silent.getLocalPort();
      int capacity = HandshakeClient.THREADS + HandshakeClient.QUEUE;
      for (int i = 0; i < capacity; i++) {
        assertThat(client.resolve("p" + i, tcp, INCARNATION)).isEqualTo(new Resolution.Pending());
      }

      Resolution resolution = client.resolve("q", tcp, INCARNATION);

      String reason =
          "too many handshakes in flight on engine c ("
              + capacity
              + "); not handshaking with q at "
              + tcp;
      assertThat(resolution).isEqualTo(new Resolution.Failed(reason));
      assertThat(observer.events)
          .containsExactly("rejected HANDSHAKE_REFUSED: " + reason, "failed q in 0: " + reason);
    }
  }

  @Test
  void anAnswerNamingAnotherKnownProducersAgentIsRefusedAsForgedBeforeAnythingIsLoaded() {
    startProducer(INCARNATION);
    ProducerPeer real = ((Resolution.Ready) client.resolve("p", address, INCARNATION)).peer();
    String elsewhere = forgerAt("evil", 7, "p-agent");

    Resolution forged = client.resolve("evil", elsewhere, 7);

    assertThat(forged)
        .isInstanceOfSatisfying(
            Resolution.Failed.class,
            f ->
                assertThat(f.reason())
                    .startsWith("handshake refused as forged: producer evil at " + elsewhere)
                    .contains("names agent p-agent, which belongs to producer p"));
    assertThat(observer.events).anyMatch(e -> e.startsWith("rejected FORGED_PEER: "));
    assertThat(observer.events).anyMatch(e -> e.startsWith("failed evil in "));
    assertThat(consumerTransport.events).containsExactly("load p-agent");
    assertThat(client.peers()).containsOnlyKeys("p");
    assertThat(client.byAgent("p-agent")).contains(real);
    assertThat(client.resolve("p", address, INCARNATION)).isEqualTo(new Resolution.Ready(real));
  }

  @Test
  void anAnswerOfAnEarlierStartThanTheKnownOneIsRefusedAsStale() {
    startProducer(INCARNATION + 1);
    ProducerPeer real = ((Resolution.Ready) client.resolve("p", address, INCARNATION + 1)).peer();
    String elsewhere = forgerAt("p", INCARNATION, "p-agent");

    Resolution forged = client.resolve("p", elsewhere, INCARNATION);

    assertRefusedKeepingWhatIsLoaded(
        forged, "older than the known incarnation 12: stale metadata", real);
  }

  @Test
  void theKnownStartOfAProducerNamingOtherAgentsIsRefusedAsForged() {
    startProducer(INCARNATION);
    ProducerPeer real = ((Resolution.Ready) client.resolve("p", address, INCARNATION)).peer();
    String elsewhere = forgerAt("p", INCARNATION, "q-agent");

    Resolution forged = client.resolve("p", elsewhere, INCARNATION);

    assertRefusedKeepingWhatIsLoaded(
        forged, "names agents [q-agent], but that incarnation's agents are" + " [p-agent]", real);
  }

  @Test
  void theKnownStartOfAProducerAnsweringWithOtherBlobsKeepsWhatIsLoadedAndWhereItWasFound() {
    startProducer(INCARNATION);
    ProducerPeer real = ((Resolution.Ready) client.resolve("p", address, INCARNATION)).peer();
    String elsewhere = forgerAt("p", INCARNATION, "p-agent");

    Resolution again = client.resolve("p", elsewhere, INCARNATION);

    assertThat(again).isEqualTo(new Resolution.Ready(real));
    assertThat(consumerTransport.events).containsExactly("load p-agent");
    assertThat(client.current("p").orElseThrow().address()).isEqualTo(address);
    assertThat(client.current("p").orElseThrow().ranks().get(0).regionAddresses())
        .isEqualTo(real.ranks().get(0).regionAddresses());
  }

  /**
   * A producer that answers as {@code engineId}, incarnation {@code incarnation}, with one rank of
   * {@link #LAYOUT} at another region than the stub producer's, whose metadata names {@code agent}.
   */
  private static HandshakeChannel.Responder forger(
      String engineId, long incarnation, String agent) {
    return new ProducerHandshake(
        Optional.empty(),
        request ->
            new Handshake.Accepted(
                engineId,
                incarnation,
                0,
                List.of(
                    new Handshake.Rank(
                        LAYOUT, List.of(1L << 20), 0, MemoryKind.DRAM, agent.getBytes(UTF_8)))),
        ProducerHandshake.Listener.NONE);
  }

  /** Serves {@link #forger} at a fresh address, until the test ends; returns the address. */
  private String forgerAt(String engineId, long incarnation, String agent) {
    String at = freshLocalAddress();
    forgers.add(serve(at, engineId, forger(engineId, incarnation, agent)));
    return at;
  }

  private void startProducer(long incarnation) {
    server = serve(address, "p", producer(incarnation));
  }

  private HandshakeResponder producer(long incarnation) {
    return stubProducer(settings("p", incarnation, this::producerClock), LAYOUT);
  }

  /** Samples midway through the answer, and the answer takes {@link #answerTime}. */
  private long producerClock() {
    long sample = now.get() + answerTime.get() / 2 + AHEAD;
    now.addAndGet(answerTime.get());
    return sample;
  }

  /**
   * {@code forged} failed naming {@code reason}, nothing was loaded but the real producer's agent,
   * and {@code real} is still the producer this client uses.
   */
  private void assertRefusedKeepingWhatIsLoaded(
      Resolution forged, String reason, ProducerPeer real) {
    assertThat(forged)
        .isInstanceOfSatisfying(
            Resolution.Failed.class, f -> assertThat(f.reason()).contains(reason));
    assertThat(consumerTransport.events).containsExactly("load p-agent");
    assertThat(client.current("p")).contains(real);
  }
}
