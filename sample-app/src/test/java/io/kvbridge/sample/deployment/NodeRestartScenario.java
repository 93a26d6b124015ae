package io.kvbridge.sample.deployment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvbridge.sample.engine.ToyModel;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * P and D as child JVMs (on the connector the subclass chooses) under a steady load from client
 * threads in this JVM, through a router in this JVM, while one node is stopped — by kill -9 or by
 * SIGTERM — and started again with the same engine id and HTTP port; P's handshake port is either
 * the one it had (a fixed port) or a fresh one (port 0), which D learns from the transfer
 * parameters.
 *
 * <p>Each restart specifies: every request ends, served with the reference completion or failed
 * with an error message; only requests in flight around the restart fail (every request that ended
 * before the stop, and every request sent once the restarted node is UP and one request has been
 * served through it, is served); and once the load stops, P holds no lease after a lease duration
 * and D no load. The restarts of one class run one after the other on the same deployment, each
 * leaving a serving pair for the next.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class NodeRestartScenario {

  private static final int MAX_TOKENS = 5;
  private static final int CLIENTS = 2;
  // How long the pair may take to serve again once the router sees both nodes UP: a handshake
  // (handshake.timeout: 5s) and a request, with room for a machine shared with other work.
  private static final Duration RECOVERED = Duration.ofSeconds(20);
  private static final Duration SETTLED = Duration.ofSeconds(60);

  /** Which node is restarted. */
  enum Node {
    PREFILL,
    DECODE
  }

  /** How the node is stopped. */
  enum Stop {
    /** kill -9: no shutdown hook runs, no socket is closed politely, no lease is revoked. */
    KILL,
    /** SIGTERM: the JVM shuts down its context. */
    TERMINATE
  }

  /** Where the restarted P answers handshakes. */
  enum HandshakePort {
    /** The port it had before: D finds the new incarnation at the address of the dead one. */
    FIXED,
    /** A port the system chooses (port 0): a new address, in the transfer parameters. */
    EPHEMERAL
  }

  /** One restart of a scenario. */
  record Restart(Node node, Stop stop, HandshakePort handshakePort) {
    @Override
    public String toString() {
      return stop
          + " "
          + node
          + (node == Node.PREFILL ? ", " + handshakePort + " handshake port" : "");
    }
  }

  private List<String> connector;
  private ChildNode prefill;
  private ChildNode decode;
  private int fixedHandshakePort;
  private InProcessRouter router;
  // Across restarts: a prompt sent before D's restart would be answered from its prefix cache.
  private final AtomicLong sequence = new AtomicLong();

  /** The connector settings both nodes get, as command-line arguments. */
  abstract List<String> connectorArguments(Path work) throws IOException;

  /**
   * The restarts to run, in order, on one deployment whose P starts on a fixed handshake port; a
   * FIXED restart of P after an EPHEMERAL one would move P's address, so FIXED ones come first.
   */
  abstract Stream<Restart> restarts();

  @BeforeAll
  void deploy(@TempDir Path work) throws Exception {
    connector = connectorArguments(work);
    prefill = new ChildNode("prefill", ChildNode.freePort(), work);
    decode = new ChildNode("decode", ChildNode.freePort(), work);
    fixedHandshakePort = ChildNode.freePort();
    prefill.start(prefillArguments(HandshakePort.FIXED));
    decode.start(connector);
    router =
        InProcessRouter.start(
            prefill,
            decode,
            "--kvbridge.sample.router.health-interval=250ms",
            "--kvbridge.sample.router.read-timeout=20s");
    prefill.awaitHealthy();
    decode.awaitHealthy();
    router.awaitSeesEveryNodeHealthy();
  }

  @AfterAll
  void stop() throws InterruptedException {
    if (router != null) {
      router.close();
    }
    for (ChildNode node : new ChildNode[] {prefill, decode}) {
      if (node != null) {
        node.close();
      }
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("restarts")
  void onlyRequestsInFlightFailAndThePairServesAgain(Restart restart) throws Exception {
    ChildNode restarted = restart.node() == Node.PREFILL ? prefill : decode;
    Load load = new Load();
    try {
      long loadStarted = System.nanoTime();
      load.start();
      load.awaitServed(3, loadStarted, SETTLED);

      long stoppedAt = System.nanoTime();
      restarted.stop(restart.stop() == Stop.KILL);
      restarted.start(
          restart.node() == Node.PREFILL ? prefillArguments(restart.handshakePort()) : connector);
      restarted.awaitHealthy();
      router.awaitSeesEveryNodeHealthy();
      // One handshake later: the first request sent from here that is served went through it.
      long recoveredAt = load.awaitServed(1, System.nanoTime(), RECOVERED).ended();
      load.awaitServed(5, recoveredAt, SETTLED);
      load.stop();

      ToyModel reference = ToyModel.standard();
      List<Answer> answers = load.answers();
      assertThat(answers)
          .as("every request ended")
          .allSatisfy(a -> assertThat(a.body()).isNotNull());
      for (Answer a : answers) {
        if (a.status() == 200) {
          assertThat(InProcessRouter.text(a.body()))
              .as("the completion of %s", a.prompt())
              .isEqualTo(reference.referenceCompletion(a.prompt(), MAX_TOKENS));
          assertThat(a.body().get("kvbridge")).asString().contains("kv_source=LOADED");
        } else {
          assertThat(a.status())
              .as("a failed request's status: %s", a.body())
              .isGreaterThanOrEqualTo(500);
          assertThat(a.errorMessage()).as("a failed request's error: %s", a.body()).isNotBlank();
        }
      }
      assertThat(answers)
          .filteredOn(a -> a.ended() - stoppedAt < 0)
          .as("requests that ended before the stop")
          .isNotEmpty()
          .allSatisfy(a -> assertThat(a.status()).as("%s", a.body()).isEqualTo(200));
      assertThat(answers)
          .filteredOn(a -> a.sent() - recoveredAt > 0)
          .as("requests sent once the pair served again")
          .hasSizeGreaterThanOrEqualTo(5)
          .allSatisfy(a -> assertThat(a.status()).as("%s", a.body()).isEqualTo(200));
    } finally {
      load.stop();
    }

    if (restart.node() == Node.PREFILL) {
      assertDecodeKnowsOnlyTheNewPrefillIncarnation(restart.handshakePort());
    }
    await()
        .atMost(ChildNode.LEASE_DURATION.plusSeconds(10))
        .untilAsserted(
            () -> {
              assertThat(prefill.producerStatus()).containsEntry("liveLeases", 0);
              assertThat(decode.consumerStatus()).containsEntry("loadsInFlight", 0);
            });
  }

  /** D dropped the dead P: the one producer it knows is P's current incarnation at its address. */
  @SuppressWarnings("unchecked")
  private void assertDecodeKnowsOnlyTheNewPrefillIncarnation(HandshakePort port) {
    Map<String, Object> p = prefill.connectorStatus();
    String address = (String) ((Map<String, Object>) p.get("producer")).get("handshakeAddress");
    if (port == HandshakePort.FIXED) {
      assertThat(address).endsWith(":" + fixedHandshakePort);
    }
    List<Map<String, Object>> producers =
        (List<Map<String, Object>>) decode.consumerStatus().get("producers");
    assertThat(producers).hasSize(1);
    assertThat(producers.get(0))
        .containsEntry("engineId", "prefill-0")
        .containsEntry("address", address);
    assertThat(String.valueOf(producers.get(0).get("incarnation")))
        .isEqualTo(String.valueOf(p.get("incarnation")));
  }

  private List<String> prefillArguments(HandshakePort port) {
    List<String> arguments = new ArrayList<>(connector);
    arguments.add(
        "--kvbridge.handshake.address=tcp://127.0.0.1:"
            + (port == HandshakePort.FIXED ? fixedHandshakePort : 0));
    return arguments;
  }

  /** Clients sending requests through the router until stopped, each prompt distinct. */
  private final class Load {
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final ConcurrentLinkedQueue<Answer> answers = new ConcurrentLinkedQueue<>();
    private final List<Thread> clients = new ArrayList<>();

    void start() {
      for (int i = 0; i < CLIENTS; i++) {
        Thread client = new Thread(this::send, "restart-load-" + i);
        client.setDaemon(true);
        clients.add(client);
        client.start();
      }
    }

    private void send() {
      while (running.get()) {
        long n = sequence.incrementAndGet();
        // The number leads so that no two prompts share a block: D's prefix cache never answers.
        String prompt = n + " is a request sent while a node restarts; ".repeat(1 + (int) (n % 3));
        long sent = System.nanoTime();
        Map<String, Object> body;
        try {
          body = router.complete(prompt, MAX_TOKENS);
        } catch (RuntimeException e) {
          body = Map.of("_status", -1, "_exception", String.valueOf(e));
        }
        answers.add(new Answer(prompt, sent, System.nanoTime(), body));
        if ((Integer) body.get("_status") != 200) {
          // A node is down: pace the failures instead of spinning through the router.
          pause();
        }
      }
    }

    /**
     * Waits up to {@code within} until {@code count} requests sent after {@code since} were served;
     * the last of them to end.
     */
    Answer awaitServed(int count, long since, Duration within) {
      return await()
          .atMost(within)
          .pollInterval(Duration.ofMillis(50))
          .until(
              () -> {
                List<Answer> served =
                    answers.stream()
                        .filter(a -> a.sent() - since > 0 && a.status() == 200)
                        .sorted((a, b) -> Long.compare(a.ended(), b.ended()))
                        .toList();
                return served.size() >= count
                    ? Optional.of(served.get(count - 1))
                    : Optional.<Answer>empty();
              },
              Optional::isPresent)
          .orElseThrow();
    }

    void stop() throws InterruptedException {
      running.set(false);
      for (Thread client : clients) {
        client.join(Duration.ofSeconds(60).toMillis());
        assertThat(client.isAlive()).as("%s ended its last request", client.getName()).isFalse();
      }
    }

    List<Answer> answers() {
      return List.copyOf(answers);
    }

    private static void pause() {
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** One request of the load: its prompt, when it was sent and ended, and the router's answer. */
  private record Answer(String prompt, long sent, long ended, Map<String, Object> body) {
    int status() {
      return (Integer) body.get("_status");
    }

    @SuppressWarnings("unchecked")
    String errorMessage() {
      Object error = body.get("error");
      return error instanceof Map<?, ?> e ? (String) ((Map<String, Object>) e).get("message") : "";
    }
  }
}
