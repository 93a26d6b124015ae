package io.kvbridge.wire;

import static io.kvbridge.wire.LoopbackPeers.assertClosedByServer;
import static io.kvbridge.wire.LoopbackPeers.converse;
import static io.kvbridge.wire.LoopbackPeers.readFrame;
import static io.kvbridge.wire.LoopbackPeers.writeFrame;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.sun.management.UnixOperatingSystemMXBean;
import io.kvbridge.net.DropReason;
import io.kvbridge.net.HandshakeAddress;
import io.kvbridge.wire.HandshakeChannel.Server;
import io.kvbridge.wire.TcpHandshakeChannel.Limits;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.BindException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Level;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The TCP handshake server's caps, drops and lifecycle, over real loopback sockets. Each test takes
 * a fraction of a second: a connection deadline is short only where its drop is what the test
 * expects, and generous wherever a conversation must finish.
 */
class TcpHandshakeServerTest {

  private static final HandshakeAddress ANY_PORT = HandshakeAddress.parse("tcp://127.0.0.1:0");

  /** A connection deadline that no conversation expected to finish comes near. */
  private static final Duration GENEROUS = Duration.ofSeconds(10);

  /** The client's deadline where its exchange is expected to succeed. */
  private static final Duration CLIENT_DEADLINE = Duration.ofSeconds(5);

  /** How long a test waits for the server to reach a state before it fails. */
  private static final Duration PATIENCE = Duration.ofSeconds(5);

  /** Greets with one byte and echoes the request. */
  private static final HandshakeChannel.Responder PROVES = TestResponder.provingEcho();

  private static final TestResponder GREETS_AND_ECHOES =
      new TestResponder(new byte[] {7}, (greeting, request) -> request);

  private final String engineId = "tcp-server-test-" + UUID.randomUUID();
  private final LoopbackPeers peers = new LoopbackPeers();
  private final List<AutoCloseable> toClose = new CopyOnWriteArrayList<>();

  @AfterEach
  void closeEverything() throws Exception {
    peers.close();
    for (AutoCloseable c : toClose) {
      c.close();
    }
  }

  // ---------------------------------------------------------------- conversations

  @Test
  void conversationOfThreeFramesIsAnsweredAndDropsNothing() throws Exception {
    TcpHandshakeChannel channel = TcpHandshakeChannel.withLimits(new Limits(GENEROUS, 16, 16));
    Server server = serve(channel, new TestResponder(new byte[] {7, 8}, TestResponder::concat));

    byte[] answer =
        channel.exchange(
            server.address(), greeting -> TestResponder.concat(greeting, new byte[] {1}), GENEROUS);

    assertThat(answer).containsExactly(7, 8, 7, 8, 1);
    assertThat(server.droppedConnections()).isEqualTo(noDrops());
  }

  @Test
  void limitsOfOneServeOneConversationAfterAnother() throws Exception {
    TcpHandshakeChannel channel = TcpHandshakeChannel.withLimits(new Limits(GENEROUS, 1, 1));
    Server server = serve(channel, GREETS_AND_ECHOES);

    for (int i = 0; i < 3; i++) {
      byte[] request = {(byte) i};
      assertThat(channel.exchange(server.address(), greeting -> request, CLIENT_DEADLINE))
          .containsExactly(i);
    }
    assertThat(server.droppedConnections()).isEqualTo(noDrops());
  }

  @Test
  void requestAndAnswerOfTheLargestFrameCrossWhole() throws Exception {
    TcpHandshakeChannel channel = TcpHandshakeChannel.withLimits(new Limits(GENEROUS, 16, 16));
    Server server = serve(channel, GREETS_AND_ECHOES);
    byte[] largest = pattern(Handshake.MAX_FRAME_BYTES);

    byte[] answer = channel.exchange(server.address(), greeting -> largest, CLIENT_DEADLINE);

    assertThat(answer).isEqualTo(largest);
    assertThat(server.droppedConnections()).isEqualTo(noDrops());
  }

  @Test
  void greetingTooLargeForTheSocketBuffersReachesAPeerThatReadsItLate() throws Exception {
    byte[] largest = pattern(Handshake.MAX_FRAME_BYTES);
    CountDownLatch secondGreeting = new CountDownLatch(2);
    HandshakeChannel.Responder greetsLarge =
        TestResponder.echoGreetingBy(
            () -> {
              secondGreeting.countDown();
              return largest;
            });
    Server server =
        serve(TcpHandshakeChannel.withLimits(new Limits(GENEROUS, 16, 16)), greetsLarge);
    Socket late = peers.connect("127.0.0.24", server.address(), 4096);

    // The I/O thread greets the next connection only once its first write to the late peer has
    // returned: whatever did not fit then waits for the peer to read.
    peers.connect("127.0.0.25", server.address());
    assertThat(secondGreeting.await(PATIENCE.toMillis(), TimeUnit.MILLISECONDS)).isTrue();

    assertThat(readFrame(late)).isEqualTo(largest);
    assertThat(converse(late, new byte[] {1})).containsExactly(1);
  }

  @Test
  void serverBoundToEveryInterfaceIsDialledAtTheLoopbackAddress() throws Exception {
    HandshakeChannel channel = TcpHandshakeChannel.withLimits(new Limits(GENEROUS, 16, 16));
    Server server = channel.serve(HandshakeAddress.parse("tcp://0.0.0.0:0"), engineId, echo());
    toClose.add(server);

    assertThat(server.address().toString()).startsWith("tcp://127.0.0.1:");
    assertThat(channel.exchange(server.address(), greeting -> new byte[] {3}, CLIENT_DEADLINE))
        .containsExactly(3);
  }

  @Test
  void serverBoundToANamedHostIsDialledByThatName() throws Exception {
    HandshakeChannel channel = TcpHandshakeChannel.withLimits(new Limits(GENEROUS, 16, 16));
    Server server = channel.serve(HandshakeAddress.parse("tcp://localhost:0"), engineId, echo());
    toClose.add(server);

    assertThat(server.address().toString()).startsWith("tcp://localhost:");
  }

  @Test
  void servingAPortThatIsTakenFailsWithTheBindErrorAndLeaksNoSocket() throws Exception {
    ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
    toClose.add(taken);
    HandshakeAddress address = HandshakeAddress.parse("tcp://127.0.0.1:" + taken.getLocalPort());
    HandshakeChannel channel = HandshakeChannel.forAddress(address);
    assertThatThrownBy(() -> channel.serve(address, engineId, echo()))
        .isInstanceOf(BindException.class);

    long before = openFileDescriptors();
    int attempts = 5;
    for (int i = 0; i < attempts; i++) {
      assertThatThrownBy(() -> channel.serve(address, engineId, echo()))
          .isInstanceOf(BindException.class);
    }

    // Below one leaked descriptor per attempt, whatever else this JVM opens meanwhile.
    assertThat(openFileDescriptors()).isLessThan(before + attempts);
  }

  // ---------------------------------------------------------------- caps

  @Test
  void perAddressCapRefusesTheNextWhenEveryConnectionHasProvedItself() throws Exception {
    Server server = serve(TcpHandshakeChannel.withLimits(new Limits(GENEROUS, 3, 16)), PROVES);
    for (int i = 0; i < 3; i++) {
      prove(peers.connect("127.0.0.21", server.address()));
    }
    Socket oneOver = peers.connect("127.0.0.21", server.address());
    Socket twoOver = peers.connect("127.0.0.21", server.address());

    assertClosedByServer(oneOver);
    assertClosedByServer(twoOver);
    assertThat(server.droppedConnections()).isEqualTo(drops(DropReason.ADDRESS_LIMIT, 2));
    assertThat(readFrame(peers.connect("127.0.0.22", server.address()))).containsExactly(7);
  }

  @Test
  void perAddressCapEvictsTheOldestConnectionThatProvedNothingForANewOne() throws Exception {
    Server server = serve(TcpHandshakeChannel.withLimits(new Limits(GENEROUS, 3, 16)), PROVES);
    Socket provedFirst = peers.connect("127.0.0.26", server.address());
    prove(provedFirst);
    Socket idle = peers.connect("127.0.0.26", server.address());
    readFrame(idle);
    Socket idleLater = peers.connect("127.0.0.26", server.address());
    readFrame(idleLater);

    Socket newcomer = peers.connect("127.0.0.26", server.address());

    assertThat(readFrame(newcomer)).containsExactly(7);
    assertClosedByServer(idle);
    assertThat(server.droppedConnections()).isEqualTo(drops(DropReason.EVICTED, 1));
    assertThat(converse(provedFirst, new byte[] {2})).containsExactly(2);
    writeFrame(idleLater, new byte[] {3});
    assertThat(readFrame(idleLater)).containsExactly(3);
  }

  @Test
  void connectionThatEndsFreesItsPlaceUnderThePerAddressCap() throws Exception {
    assertAnEndedConnectionFreesItsPlace(
        new Limits(GENEROUS, 2, 16),
        DropReason.ADDRESS_LIMIT,
        "127.0.0.23",
        "127.0.0.23",
        "127.0.0.23",
        "127.0.0.23");
  }

  @Test
  void totalCapRefusesTheNextWhenEveryConnectionHasProvedItself() throws Exception {
    Server server = serve(TcpHandshakeChannel.withLimits(new Limits(GENEROUS, 16, 2)), PROVES);
    prove(peers.connect("127.0.0.31", server.address()));
    prove(peers.connect("127.0.0.32", server.address()));
    Socket oneOver = peers.connect("127.0.0.33", server.address());

    assertClosedByServer(oneOver);
    assertThat(server.droppedConnections()).isEqualTo(drops(DropReason.TOTAL_LIMIT, 1));
  }

  @Test
  void totalCapEvictsTheOldestConnectionThatProvedNothingForANewOne() throws Exception {
    Server server = serve(TcpHandshakeChannel.withLimits(new Limits(GENEROUS, 16, 3)), PROVES);
    Socket idle = peers.connect("127.0.0.38", server.address());
    readFrame(idle);
    prove(peers.connect("127.0.0.39", server.address()));
    Socket idleLater = peers.connect("127.0.0.40", server.address());
    readFrame(idleLater);

    Socket newcomer = peers.connect("127.0.0.42", server.address());

    assertThat(readFrame(newcomer)).containsExactly(7);
    assertClosedByServer(idle);
    assertThat(server.droppedConnections()).isEqualTo(drops(DropReason.EVICTED, 1));
  }

  @Test
  void placesKeptForAddressesServedBeforeAdmitThemWhenOthersFillTheRest() throws Exception {
    Server server =
        serve(
            TcpHandshakeChannel.withLimits(new Limits(GENEROUS, 16, 3, Duration.ofSeconds(1), 1)),
            PROVES);
    Socket served = peers.connect("127.0.0.43", server.address());
    prove(served);
    assertThat(converse(served, new byte[] {1})).containsExactly(1);
    prove(peers.connect("127.0.0.44", server.address()));
    prove(peers.connect("127.0.0.45", server.address()));

    Socket stranger = peers.connect("127.0.0.46", server.address());
    Socket known = peers.connect("127.0.0.43", server.address());

    assertClosedByServer(stranger);
    assertThat(readFrame(known)).containsExactly(7);
    assertThat(server.droppedConnections()).isEqualTo(drops(DropReason.TOTAL_LIMIT, 1));
  }

  @Test
  void connectionThatEndsFreesItsPlaceUnderTheTotalCap() throws Exception {
    assertAnEndedConnectionFreesItsPlace(
        new Limits(GENEROUS, 16, 2),
        DropReason.TOTAL_LIMIT,
        "127.0.0.34",
        "127.0.0.35",
        "127.0.0.36",
        "127.0.0.37");
  }

  /**
   * Under a cap of two, connects from the first two addresses and has both prove themselves, ends
   * the first conversation, and checks that the third address takes the freed place while the
   * fourth is dropped for {@code cap}.
   */
  private void assertAnEndedConnectionFreesItsPlace(
      Limits limits, DropReason cap, String... addresses) throws Exception {
    Server server = serve(TcpHandshakeChannel.withLimits(limits), PROVES);
    Socket first = peers.connect(addresses[0], server.address());
    prove(first);
    prove(peers.connect(addresses[1], server.address()));

    assertThat(converse(first, new byte[] {1})).containsExactly(1);

    Socket third = peers.connect(addresses[2], server.address());
    prove(third);
    Socket fourth = peers.connect(addresses[3], server.address());
    assertClosedByServer(fourth);
    assertThat(server.droppedConnections()).isEqualTo(drops(cap, 1));
  }

  /** Reads the greeting and sends one frame, which proves the peer to {@link #PROVES}. */
  private static void prove(Socket socket) throws IOException {
    assertThat(readFrame(socket)).containsExactly(7);
    writeFrame(socket, new byte[] {9});
    assertThat(readFrame(socket)).containsExactly(9);
  }

  // ---------------------------------------------------------------- deadline and frames

  @Test
  void connectionThatHasNotProvedItselfByItsProofDeadlineIsDroppedLongBeforeItsDeadline()
      throws Exception {
    Server server =
        serve(
            TcpHandshakeChannel.withLimits(
                new Limits(Duration.ofSeconds(30), 16, 16, Duration.ofMillis(200), 0)),
            PROVES);
    Socket idle = peers.connect("127.0.0.50", server.address());
    Socket proved = peers.connect("127.0.0.51", server.address());
    prove(proved);
    long start = System.nanoTime();

    readFrame(idle);
    assertClosedByServer(idle);

    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
    assertThat(server.droppedConnections()).isEqualTo(drops(DropReason.DEADLINE_PASSED, 1));
    Thread.sleep(300);
    assertThat(converse(proved, new byte[] {2})).containsExactly(2);
  }

  @Test
  void connectionHalfWayThroughItsRequestAtItsDeadlineIsDroppedAndCounted() throws Exception {
    Server server = serve(new Limits(Duration.ofMillis(200), 16, 16));
    Socket socket = peers.connect("127.0.0.41", server.address());
    readFrame(socket);

    socket.getOutputStream().write(new byte[] {0, 0});

    assertDroppedFor(server, socket, DropReason.DEADLINE_PASSED);
  }

  @Test
  void connectionStillAwaitingItsAnswerAtItsDeadlineIsDroppedAndCounted() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    TestResponder neverInTime =
        new TestResponder(
            new byte[] {7},
            (greeting, request) -> {
              awaitUninterruptibly(release);
              return request;
            });
    Server server =
        serve(
            TcpHandshakeChannel.withLimits(new Limits(Duration.ofMillis(200), 16, 16)),
            neverInTime);
    Socket socket = peers.connect("127.0.0.42", server.address());
    readFrame(socket);
    writeFrame(socket, new byte[] {1});

    try {
      assertDroppedFor(server, socket, DropReason.DEADLINE_PASSED);
    } finally {
      release.countDown();
    }
  }

  @Test
  void frameAnnouncedOneByteOverTheLimitIsDroppedAsSoonAsItsLengthArrives() throws Exception {
    Server server = serve(new Limits(GENEROUS, 16, 16));
    Socket socket = peers.connect("127.0.0.43", server.address());
    readFrame(socket);

    new DataOutputStream(socket.getOutputStream()).writeInt(Handshake.MAX_FRAME_BYTES + 1);

    assertDroppedFor(server, socket, DropReason.FRAME_REFUSED);
  }

  // ---------------------------------------------------------------- peers and responders that fail

  @Test
  void peerThatHangsUpBeforeItsRequestIsClosedWithoutADropAndLoggedAtDebug() throws Exception {
    try (ServerLog log = new ServerLog()) {
      TcpHandshakeChannel channel = TcpHandshakeChannel.withLimits(new Limits(GENEROUS, 16, 1));
      Server server = serve(channel, GREETS_AND_ECHOES);
      Socket socket = peers.connect("127.0.0.44", server.address());
      readFrame(socket);

      socket.shutdownOutput();

      assertClosedByServer(socket);
      assertThat(channel.exchange(server.address(), greeting -> new byte[] {2}, CLIENT_DEADLINE))
          .containsExactly(2);
      assertThat(server.droppedConnections()).isEqualTo(noDrops());
      assertThat(log.at(Level.FINE))
          .anySatisfy(m -> assertThat(m).contains("from /127.0.0.44 failed"));
      assertThat(log.above(Level.FINE)).isEmpty();
    }
  }

  @Test
  void peerResetBeforeItIsGreetedIsClosedWithoutADrop() throws Exception {
    CountDownLatch greeting = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    TcpHandshakeChannel channel = TcpHandshakeChannel.withLimits(new Limits(GENEROUS, 16, 2));
    Server server = serve(channel, greetsOnceReleased(greeting, release));
    Socket first = peers.connect("127.0.0.45", server.address());
    assertThat(greeting.await(PATIENCE.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
    // Connected while the server's I/O thread is held, and reset before it is accepted: greeting
    // it fails.
    Socket reset = peers.connect("127.0.0.46", server.address());
    reset.setSoLinger(true, 0);
    reset.close();
    release.countDown();
    readFrame(first);

    awaitAnExchangeSucceeds(channel, server);
    assertThat(server.droppedConnections())
        .containsEntry(DropReason.DEADLINE_PASSED, 0L)
        .containsEntry(DropReason.FRAME_REFUSED, 0L);
  }

  @Test
  void peerResetWhileItsAnswerIsPreparedIsClosedWithoutADrop() throws Exception {
    CountDownLatch answering = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger answers = new AtomicInteger();
    TestResponder slowFirst =
        new TestResponder(
            new byte[] {7},
            (greeting, request) -> {
              if (answers.getAndIncrement() == 0) {
                answering.countDown();
                awaitUninterruptibly(release);
              }
              return request;
            });
    TcpHandshakeChannel channel = TcpHandshakeChannel.withLimits(new Limits(GENEROUS, 16, 1));
    Server server = serve(channel, slowFirst);
    Socket socket = peers.connect("127.0.0.47", server.address());
    readFrame(socket);
    writeFrame(socket, new byte[] {1});
    assertThat(answering.await(PATIENCE.toMillis(), TimeUnit.MILLISECONDS)).isTrue();

    socket.setSoLinger(true, 0);
    socket.close();
    release.countDown();

    awaitAnExchangeSucceeds(channel, server);
    assertThat(server.droppedConnections())
        .containsEntry(DropReason.DEADLINE_PASSED, 0L)
        .containsEntry(DropReason.FRAME_REFUSED, 0L);
  }

  @Test
  void responderThatFailsToGreetHasItsConnectionClosedAndLoggedAsAWarning() throws Exception {
    AtomicInteger greetings = new AtomicInteger();
    HandshakeChannel.Responder failsFirst =
        TestResponder.echoGreetingBy(
            () -> {
              if (greetings.getAndIncrement() == 0) {
                throw new IllegalStateException("no nonce today");
              }
              return new byte[] {7};
            });
    try (ServerLog log = new ServerLog()) {
      TcpHandshakeChannel channel = TcpHandshakeChannel.withLimits(new Limits(GENEROUS, 16, 1));
      Server server = serve(channel, failsFirst);
      Socket socket = peers.connect("127.0.0.48", server.address());

      assertClosedByServer(socket);
      assertThat(channel.exchange(server.address(), greeting -> new byte[] {2}, CLIENT_DEADLINE))
          .containsExactly(2);
      assertThat(server.droppedConnections()).isEqualTo(noDrops());
      assertThat(log.at(Level.WARNING)).containsExactly("greeting a handshake connection failed");
      assertThat(log.thrownAt(Level.WARNING))
          .extracting(Throwable::getMessage)
          .containsExactly("no nonce today");
    }
  }

  @Test
  void responderThatFailsToAnswerHasItsConnectionClosedAndLoggedAsAWarning() throws Exception {
    AtomicInteger answers = new AtomicInteger();
    TestResponder failsFirst =
        new TestResponder(
            new byte[] {7},
            (greeting, request) -> {
              if (answers.getAndIncrement() == 0) {
                throw new IllegalStateException("no metadata today");
              }
              return request;
            });
    try (ServerLog log = new ServerLog()) {
      TcpHandshakeChannel channel = TcpHandshakeChannel.withLimits(new Limits(GENEROUS, 16, 1));
      Server server = serve(channel, failsFirst);

      assertThatThrownBy(
              () -> channel.exchange(server.address(), greeting -> new byte[] {1}, GENEROUS))
          .isInstanceOf(EOFException.class)
          .hasMessageContaining("closed the connection before sending the answer");
      assertThat(channel.exchange(server.address(), greeting -> new byte[] {2}, CLIENT_DEADLINE))
          .containsExactly(2);
      assertThat(server.droppedConnections()).isEqualTo(noDrops());
      await()
          .atMost(PATIENCE)
          .untilAsserted(
              () ->
                  assertThat(log.at(Level.WARNING))
                      .containsExactly("answering a handshake failed"));
      assertThat(log.thrownAt(Level.WARNING))
          .extracting(Throwable::getMessage)
          .containsExactly("no metadata today");
    }
  }

  @Test
  void dropsAreLoggedAtDebugOnlyNamingThePeerAndTheReason() throws Exception {
    try (ServerLog log = new ServerLog()) {
      Server server = serve(TcpHandshakeChannel.withLimits(new Limits(GENEROUS, 1, 16)), PROVES);
      Socket admitted = peers.connect("127.0.0.49", server.address());
      prove(admitted);
      Socket oneOver = peers.connect("127.0.0.49", server.address());
      assertClosedByServer(oneOver);

      new DataOutputStream(admitted.getOutputStream()).writeInt(-1);
      assertClosedByServer(admitted);

      await()
          .atMost(PATIENCE)
          .untilAsserted(
              () ->
                  assertThat(log.at(Level.FINE))
                      .anySatisfy(
                          m ->
                              assertThat(m)
                                  .isEqualTo(
                                      "handshake connection from /127.0.0.49 refused:"
                                          + " ADDRESS_LIMIT"))
                      .anySatisfy(
                          m ->
                              assertThat(m)
                                  .isEqualTo(
                                      "handshake connection from /127.0.0.49 dropped:"
                                          + " FRAME_REFUSED, handshake frame of 4294967295 bytes"
                                          + " refused; limit "
                                          + Handshake.MAX_FRAME_BYTES)));
      assertThat(log.above(Level.FINE)).isEmpty();
    }
  }

  // ---------------------------------------------------------------- lifecycle

  @Test
  void closeEndsTheIoThreadStopsAcceptingAndReleasesThePort() throws Exception {
    try (ServerLog log = new ServerLog()) {
      HandshakeChannel channel = TcpHandshakeChannel.withLimits(new Limits(GENEROUS, 16, 16));
      Server server = serve(channel, GREETS_AND_ECHOES);
      channel.exchange(server.address(), greeting -> new byte[] {1}, CLIENT_DEADLINE);
      Thread io = thread("kvbridge-handshake-io-" + engineId);

      server.close();

      assertThat(io.isAlive()).isFalse();
      assertThatThrownBy(() -> peers.connect("127.0.0.1", server.address()))
          .isInstanceOf(ConnectException.class);
      Server again = channel.serve(server.address(), engineId + "-again", echo());
      toClose.add(again);
      assertThat(again.address()).isEqualTo(server.address());
      assertThat(log.at(Level.FINE)).noneMatch(m -> m.contains("still answering"));
    }
  }

  @Test
  void closeOnAnInterruptedThreadReturnsAtOnceKeepingTheInterrupt() throws Exception {
    CountDownLatch greeting = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    Server server =
        serve(
            TcpHandshakeChannel.withLimits(new Limits(GENEROUS, 16, 16)),
            greetsOnceReleased(greeting, release));
    Socket socket = peers.connect("127.0.0.51", server.address());
    assertThat(greeting.await(PATIENCE.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
    Thread io = thread("kvbridge-handshake-io-" + engineId);

    // The I/O thread is held in the greeting, so close() would wait for it; interrupted, it
    // returns at once.
    Thread.currentThread().interrupt();
    try {
      server.close();
      assertThat(Thread.currentThread().isInterrupted()).isTrue();
    } finally {
      Thread.interrupted();
      release.countDown();
    }

    assertThat(readFrame(socket)).containsExactly(7);
    assertClosedByServer(socket);
    await().atMost(PATIENCE).until(() -> !io.isAlive());
  }

  @Test
  void closeDoesNotWaitForeverForAWorkerThatIgnoresItAndSaysSo() throws Exception {
    CountDownLatch answering = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    TestResponder stuck =
        new TestResponder(
            new byte[] {7},
            (greeting, request) -> {
              answering.countDown();
              awaitUninterruptibly(release);
              return request;
            });
    Server server = serve(TcpHandshakeChannel.withLimits(new Limits(GENEROUS, 16, 16)), stuck);
    Socket socket = peers.connect("127.0.0.50", server.address());
    readFrame(socket);
    writeFrame(socket, new byte[] {1});
    assertThat(answering.await(PATIENCE.toMillis(), TimeUnit.MILLISECONDS)).isTrue();

    try (ServerLog log = new ServerLog()) {
      server.close();

      assertThat(log.at(Level.FINE))
          .containsExactly(
              "a handshake worker of " + server.address() + " is still answering after close");
    } finally {
      release.countDown();
    }
    assertClosedByServer(socket);
  }

  @Test
  void serverThreadsAreDaemonsSoTheyNeverHoldTheJvmOpen() throws Exception {
    HandshakeChannel channel = TcpHandshakeChannel.withLimits(new Limits(GENEROUS, 16, 16));
    Server server = serve(channel, GREETS_AND_ECHOES);
    channel.exchange(server.address(), greeting -> new byte[] {1}, CLIENT_DEADLINE);

    assertThat(thread("kvbridge-handshake-io-" + engineId).isDaemon()).isTrue();
    assertThat(thread("kvbridge-handshake-" + engineId + "-1").isDaemon()).isTrue();
  }

  // ---------------------------------------------------------------- helpers

  private Server serve(Limits limits) throws IOException {
    return serve(TcpHandshakeChannel.withLimits(limits), GREETS_AND_ECHOES);
  }

  private Server serve(HandshakeChannel channel, HandshakeChannel.Responder responder)
      throws IOException {
    Server server = channel.serve(ANY_PORT, engineId, responder);
    toClose.add(server);
    return server;
  }

  private static TestResponder echo() {
    return TestResponder.echo();
  }

  /**
   * Waits until an exchange succeeds: a connection the server closed on its own, out of sight of
   * any peer, must free its place under the cap soon.
   */
  private static void awaitAnExchangeSucceeds(HandshakeChannel channel, Server server) {
    await()
        .atMost(PATIENCE)
        .ignoreExceptions()
        .untilAsserted(
            () ->
                assertThat(
                        channel.exchange(
                            server.address(), greeting -> new byte[] {2}, CLIENT_DEADLINE))
                    .containsExactly(2));
  }

  private static byte[] pattern(int length) {
    byte[] bytes = new byte[length];
    for (int i = 0; i < length; i++) {
      bytes[i] = (byte) (i * 31);
    }
    return bytes;
  }

  /** Greets with one byte, the first greeting only once {@code release} is counted down. */
  private static HandshakeChannel.Responder greetsOnceReleased(
      CountDownLatch greeting, CountDownLatch release) {
    AtomicInteger greetings = new AtomicInteger();
    return TestResponder.echoGreetingBy(
        () -> {
          if (greetings.getAndIncrement() == 0) {
            greeting.countDown();
            awaitUninterruptibly(release);
          }
          return new byte[] {7};
        });
  }

  private static Map<DropReason, Long> noDrops() {
    Map<DropReason, Long> drops = new EnumMap<>(DropReason.class);
    for (DropReason reason : DropReason.values()) {
      drops.put(reason, 0L);
    }
    return drops;
  }

  /**
   * Checks that the server closed {@code socket} and counts it, soon, as one drop for {@code
   * reason}.
   */
  private static void assertDroppedFor(Server server, Socket socket, DropReason reason)
      throws IOException {
    assertClosedByServer(socket);
    await()
        .atMost(PATIENCE)
        .untilAsserted(() -> assertThat(server.droppedConnections()).isEqualTo(drops(reason, 1)));
  }

  private static Map<DropReason, Long> drops(DropReason reason, long count) {
    Map<DropReason, Long> drops = noDrops();
    drops.put(reason, count);
    return drops;
  }

  private static long openFileDescriptors() {
    return ((UnixOperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
        .getOpenFileDescriptorCount();
  }

  private static Thread thread(String name) {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().equals(name))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no thread named " + name));
  }

  /** Waits for {@code latch} however often it is interrupted, as a responder that ignores close. */
  private static void awaitUninterruptibly(CountDownLatch latch) {
    boolean interrupted = false;
    while (true) {
      try {
        if (latch.await(LoopbackPeers.SAFETY_TIMEOUT_MS, TimeUnit.MILLISECONDS)) {
          break;
        }
        throw new IllegalStateException("the test never released the responder");
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }
}
