package io.kvbridge.wire;

import static io.kvbridge.wire.LoopbackPeers.assertClosedByServer;
import static io.kvbridge.wire.LoopbackPeers.readFrame;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.kvbridge.net.DropReason;
import io.kvbridge.net.HandshakeAddress;
import io.kvbridge.wire.TcpHandshakeChannel.Limits;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class TcpHandshakeChannelTest {

  private static final HandshakeAddress ANY_PORT = HandshakeAddress.parse("tcp://127.0.0.1:0");

  private final List<AutoCloseable> toClose = new CopyOnWriteArrayList<>();
  private final ScheduledExecutorService peers = Executors.newScheduledThreadPool(2);
  private final LoopbackPeers sockets = new LoopbackPeers();

  @AfterEach
  void closeEverything() throws Exception {
    peers.shutdownNow();
    sockets.close();
    for (AutoCloseable c : toClose) {
      c.close();
    }
  }

  @Test
  void conversationCarriesTheGreetingIntoTheRequestAndReturnsTheAnswer() throws Exception {
    HandshakeChannel channel = HandshakeChannel.forAddress(ANY_PORT);
    HandshakeChannel.Server server =
        serve(channel, new TestResponder(new byte[] {7, 7}, TestResponder::concat));
    AtomicReference<byte[]> greetingSeen = new AtomicReference<>();

    byte[] answer =
        channel.exchange(
            server.address(),
            greeting -> {
              greetingSeen.set(greeting);
              return new byte[] {1, 2, 3};
            },
            Duration.ofSeconds(5));

    assertThat(greetingSeen.get()).containsExactly(7, 7);
    assertThat(answer).containsExactly(7, 7, 1, 2, 3);
    assertThat(server.address().toString()).startsWith("tcp://127.0.0.1:");
  }

  @Test
  void idleConnectionIsClosedAtTheConnectionDeadlineAndCounted() throws Exception {
    HandshakeChannel.Server server =
        serve(TcpHandshakeChannel.withLimits(new Limits(Duration.ofMillis(300), 16, 1024)));
    Socket idle = connect("127.0.0.1", server);
    readFrame(idle);

    assertThat(idle.getInputStream().read()).isEqualTo(-1);
    await()
        .atMost(Duration.ofSeconds(5))
        .untilAsserted(
            () ->
                assertThat(server.droppedConnections())
                    .containsEntry(DropReason.DEADLINE_PASSED, 1L));
  }

  @Test
  void connectionBeyondThePerAddressLimitEvictsTheOldestIdleOneOfThatAddress() throws Exception {
    HandshakeChannel channel =
        TcpHandshakeChannel.withLimits(new Limits(Duration.ofSeconds(10), 2, 1024));

    HandshakeChannel.Server server =
        assertTheOldestIdleIsEvicted(channel, DropReason.ADDRESS_LIMIT, "127.0.0.5", "127.0.0.5");

    assertThat(
            channel.exchange(server.address(), greeting -> new byte[] {4}, Duration.ofSeconds(5)))
        .containsExactly(4);
  }

  @Test
  void connectionBeyondTheTotalLimitEvictsTheOldestIdleOne() throws Exception {
    assertTheOldestIdleIsEvicted(
        TcpHandshakeChannel.withLimits(new Limits(Duration.ofSeconds(10), 16, 2)),
        DropReason.TOTAL_LIMIT,
        "127.0.0.6",
        "127.0.0.7",
        "127.0.0.8");
  }

  /**
   * Under a cap of two, connects from the first two addresses (the last one again if only two are
   * given) and a third time: the third is greeted, the oldest closed and counted as evicted, never
   * as refused for {@code cap}.
   */
  private HandshakeChannel.Server assertTheOldestIdleIsEvicted(
      HandshakeChannel channel, DropReason cap, String... addresses) throws IOException {
    HandshakeChannel.Server server = serve(channel);
    Socket oldest = connect(addresses[0], server);
    readFrame(oldest);
    readFrame(connect(addresses[1], server));
    Socket third = connect(addresses[addresses.length - 1], server);

    assertThat(readFrame(third)).isEmpty();
    assertClosedByServer(oldest);
    assertThat(server.droppedConnections())
        .containsEntry(DropReason.EVICTED, 1L)
        .containsEntry(cap, 0L);
    return server;
  }

  @Test
  void tcpServerDropsAnOversizedFrameAndKeepsServing() throws Exception {
    HandshakeChannel channel = HandshakeChannel.forAddress(ANY_PORT);
    HandshakeChannel.Server server = serve(channel);
    Socket socket = connect("127.0.0.1", server);
    readFrame(socket);

    new DataOutputStream(socket.getOutputStream()).writeInt(Handshake.MAX_FRAME_BYTES + 1);

    assertThat(socket.getInputStream().read()).isEqualTo(-1);
    assertThat(server.droppedConnections()).containsEntry(DropReason.FRAME_REFUSED, 1L);
    assertThat(
            channel.exchange(server.address(), greeting -> new byte[] {9}, Duration.ofSeconds(5)))
        .containsExactly(9);
  }

  @Test
  void aFrameLengthWithTheTopBitSetIsRefused() throws Exception {
    HandshakeChannel.Server server = serve(HandshakeChannel.forAddress(ANY_PORT));
    Socket socket = connect("127.0.0.1", server);
    readFrame(socket);

    new DataOutputStream(socket.getOutputStream()).writeInt(-1);

    assertThat(socket.getInputStream().read()).isEqualTo(-1);
    assertThat(server.droppedConnections()).containsEntry(DropReason.FRAME_REFUSED, 1L);
  }

  @Test
  void floodOfIdleConnectionsAndSlowSendersDoesNotStarveRealHandshakes() throws Exception {
    HandshakeChannel channel =
        TcpHandshakeChannel.withLimits(
            new Limits(
                Duration.ofSeconds(2), Limits.DEFAULTS.perAddress(), Limits.DEFAULTS.total()));
    HandshakeChannel.Server server = serve(channel);
    for (int i = 0; i < 200; i++) {
      connect("127.0.0.3", server);
    }
    List<Trickle> slowSenders = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      slowSenders.add(new Trickle(connect("127.0.0.4", server).getOutputStream()));
    }
    peers.scheduleAtFixedRate(
        () -> slowSenders.forEach(Trickle::sendOneByte), 0, 200, TimeUnit.MILLISECONDS);

    List<byte[]> answers = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      byte[] request = {(byte) i};
      answers.add(channel.exchange(server.address(), greeting -> request, Duration.ofSeconds(1)));
    }

    assertThat(answers).hasSize(20);
    for (int i = 0; i < 20; i++) {
      assertThat(answers.get(i)).containsExactly(i);
    }
    assertThat(server.droppedConnections().get(DropReason.EVICTED)).isPositive();
  }

  @Test
  void drippingServerCannotHoldAnExchangePastItsDeadline() throws Exception {
    ServerSocket dripping = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    toClose.add(dripping);
    peers.execute(() -> greetThenDripForever(dripping));
    HandshakeAddress address = HandshakeAddress.parse("tcp://127.0.0.1:" + dripping.getLocalPort());
    HandshakeChannel channel = HandshakeChannel.forAddress(address);

    assertTimeoutPreemptively(
        Duration.ofSeconds(5),
        () ->
            assertThatThrownBy(
                    () ->
                        channel.exchange(
                            address, greeting -> new byte[] {1}, Duration.ofSeconds(1)))
                .isInstanceOf(SocketTimeoutException.class)
                .hasMessageContaining("deadline of 1000 ms passed at " + address)
                .hasMessageContaining("while waiting for the answer"));
  }

  @Test
  void closingTheServerClosesItsConnectionsAndEndsItsThreads() throws Exception {
    String engineId = "closing-" + UUID.randomUUID();
    HandshakeChannel channel = HandshakeChannel.forAddress(ANY_PORT);
    HandshakeChannel.Server server = channel.serve(ANY_PORT, engineId, TestResponder.echo());
    channel.exchange(server.address(), greeting -> new byte[] {1}, Duration.ofSeconds(5));
    Socket open = connect("127.0.0.1", server);
    readFrame(open);

    server.close();

    assertThat(open.getInputStream().read()).isEqualTo(-1);
    assertThatThrownBy(
            () ->
                channel.exchange(server.address(), greeting -> new byte[1], Duration.ofSeconds(5)))
        .isInstanceOf(ConnectException.class);
    await()
        .atMost(Duration.ofSeconds(5))
        .until(
            () ->
                Thread.getAllStackTraces().keySet().stream()
                    .noneMatch(t -> t.getName().contains(engineId)));
  }

  @Test
  void limitsNameTheLimitThatIsOutOfRange() {
    assertThatThrownBy(() -> new Limits(Duration.ZERO, 16, 1024))
        .hasMessageContaining("connectionDeadline must be positive");
    assertThatThrownBy(() -> new Limits(Duration.ofSeconds(5), 0, 1024))
        .hasMessageContaining("perAddress limit must be at least 1");
    assertThatThrownBy(() -> new Limits(Duration.ofSeconds(5), 16, 0))
        .hasMessageContaining("total connection limit must be at least 1");
  }

  @Test
  void serverThatNeverReadsCannotHoldAnExchangePastItsDeadline() throws Exception {
    ServerSocket deaf = new ServerSocket();
    toClose.add(deaf);
    deaf.setReceiveBufferSize(4096);
    deaf.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 50);
    peers.execute(() -> greetThenNeverRead(deaf));
    HandshakeAddress address = HandshakeAddress.parse("tcp://127.0.0.1:" + deaf.getLocalPort());
    HandshakeChannel channel = HandshakeChannel.forAddress(address);
    byte[] largest = new byte[Handshake.MAX_FRAME_BYTES];

    assertTimeoutPreemptively(
        Duration.ofSeconds(5),
        () ->
            assertThatThrownBy(
                    () -> channel.exchange(address, greeting -> largest, Duration.ofSeconds(1)))
                .isInstanceOf(SocketTimeoutException.class)
                .hasMessageContaining("deadline of 1000 ms passed at " + address)
                .hasMessageContaining("while waiting to send the request"));
  }

  @Test
  void serverThatNeverAcceptsCannotHoldAnExchangePastItsDeadline() throws Exception {
    ServerSocket full = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
    toClose.add(full);
    fillAcceptQueue(full);
    HandshakeAddress address = HandshakeAddress.parse("tcp://127.0.0.1:" + full.getLocalPort());
    HandshakeChannel channel = HandshakeChannel.forAddress(address);

    assertTimeoutPreemptively(
        Duration.ofSeconds(5),
        () ->
            assertThatThrownBy(
                    () ->
                        channel.exchange(address, greeting -> new byte[1], Duration.ofMillis(300)))
                .isInstanceOf(SocketTimeoutException.class)
                .hasMessageContaining("deadline of 300 ms passed at " + address)
                .hasMessageContaining("while waiting for a connection"));
  }

  @Test
  void requestOverTheFrameLimitIsRefusedBeforeItIsSent() throws Exception {
    HandshakeChannel channel = HandshakeChannel.forAddress(ANY_PORT);
    HandshakeChannel.Server server = serve(channel);

    assertThatThrownBy(
            () ->
                channel.exchange(
                    server.address(),
                    greeting -> new byte[Handshake.MAX_FRAME_BYTES + 1],
                    Duration.ofSeconds(5)))
        .isInstanceOf(IOException.class)
        .hasMessage(
            "handshake request of "
                + (Handshake.MAX_FRAME_BYTES + 1)
                + " bytes refused; limit "
                + Handshake.MAX_FRAME_BYTES);
    assertThat(server.droppedConnections()).containsEntry(DropReason.FRAME_REFUSED, 0L);
  }

  @Test
  void deadlinesTooLongForNanosecondsNeitherOverflowNorExpire() throws Exception {
    Duration centuries = Duration.ofSeconds(Long.MAX_VALUE);
    HandshakeChannel channel = TcpHandshakeChannel.withLimits(new Limits(centuries, 16, 16));
    HandshakeChannel.Server server = serve(channel);

    assertThat(channel.exchange(server.address(), greeting -> new byte[] {6}, centuries))
        .containsExactly(6);
    assertThat(server.droppedConnections()).containsEntry(DropReason.DEADLINE_PASSED, 0L);
  }

  @Test
  void durationsTooLongForNanosecondsSaturate() {
    assertThat(TcpHandshakeChannel.saturatedNanos(Duration.ofMillis(5))).isEqualTo(5_000_000L);
    assertThat(TcpHandshakeChannel.saturatedNanos(Duration.ofSeconds(Long.MAX_VALUE)))
        .isEqualTo(Long.MAX_VALUE);
    assertThat(TcpHandshakeChannel.saturatedNanos(Duration.ofSeconds(Long.MIN_VALUE)))
        .isEqualTo(Long.MIN_VALUE);
  }

  @Test
  void waitsAreRoundedUpToWholeMillisecondsAndNeverZero() {
    assertThat(TcpHandshakeChannel.ceilMillis(0)).isEqualTo(1);
    assertThat(TcpHandshakeChannel.ceilMillis(1)).isEqualTo(1);
    assertThat(TcpHandshakeChannel.ceilMillis(1_000_000)).isEqualTo(1);
    assertThat(TcpHandshakeChannel.ceilMillis(1_000_001)).isEqualTo(2);
    assertThat(TcpHandshakeChannel.ceilMillis(2_000_000)).isEqualTo(2);
    assertThat(TcpHandshakeChannel.ceilMillis(2_500_000)).isEqualTo(3);
  }

  @Test
  void totalLimitFarBeyondWhatAHostCanOpenStillServes() throws Exception {
    HandshakeChannel channel =
        TcpHandshakeChannel.withLimits(new Limits(Duration.ofSeconds(10), 16, Integer.MAX_VALUE));
    HandshakeChannel.Server server = serve(channel);

    assertThat(
            channel.exchange(server.address(), greeting -> new byte[] {5}, Duration.ofSeconds(5)))
        .containsExactly(5);
  }

  @Test
  void limitsOfOneAreTheSmallestAccepted() {
    Limits smallest = new Limits(Duration.ofNanos(1), 1, 1);

    assertThat(smallest.perAddress()).isEqualTo(1);
    assertThat(smallest.total()).isEqualTo(1);
  }

  @Test
  void channelKeepsTheLimitsItWasMadeWith() {
    Limits limits = new Limits(Duration.ofSeconds(3), 4, 8);

    assertThat(TcpHandshakeChannel.withLimits(limits).limits()).isSameAs(limits);
    assertThat(TcpHandshakeChannel.INSTANCE.limits()).isEqualTo(Limits.DEFAULTS);
  }

  // ---------------------------------------------------------------- helpers

  private HandshakeChannel.Server serve(HandshakeChannel channel) throws IOException {
    return serve(channel, TestResponder.echo());
  }

  private HandshakeChannel.Server serve(HandshakeChannel channel, TestResponder responder)
      throws IOException {
    HandshakeChannel.Server server = channel.serve(ANY_PORT, "p", responder);
    toClose.add(server);
    return server;
  }

  /** A raw client socket from {@code localAddress}. */
  private Socket connect(String localAddress, HandshakeChannel.Server server) throws IOException {
    return sockets.connect(localAddress, server.address());
  }

  /** Connects until the kernel drops connection attempts: the listener's accept queue is full. */
  private void fillAcceptQueue(ServerSocket listener) throws IOException {
    for (int i = 0; i < 64; i++) {
      Socket socket = new Socket();
      toClose.add(socket);
      try {
        socket.connect(listener.getLocalSocketAddress(), 200);
      } catch (SocketTimeoutException full) {
        return;
      }
    }
    throw new AssertionError("the accept queue of " + listener + " never filled");
  }

  /** Greets the first connection with an empty frame, then never reads from it. */
  private void greetThenNeverRead(ServerSocket server) {
    try {
      Socket socket = server.accept();
      toClose.add(socket);
      OutputStream out = socket.getOutputStream();
      out.write(new byte[] {0, 0, 0, 0});
      out.flush();
    } catch (IOException closed) {
      // The test ended first.
    }
  }

  /** How many of {@code sockets} were greeted; the others must have been closed unanswered. */
  /** A request that announces 100 bytes, sent one byte a call. */
  private static final class Trickle {
    private static final byte[] HEADER = {0, 0, 0, 100};
    private final OutputStream out;
    private int sent;

    Trickle(OutputStream out) {
      this.out = out;
    }

    void sendOneByte() {
      try {
        out.write(sent < HEADER.length ? HEADER[sent] : 1);
        out.flush();
        sent++;
      } catch (IOException closedByTheServer) {
        // Expected once the server's deadline has passed.
      }
    }
  }

  /** Greets promptly, then sends an answer that announces 100 bytes, one byte every 300 ms. */
  private void greetThenDripForever(ServerSocket server) {
    try {
      Socket socket = server.accept();
      toClose.add(socket);
      OutputStream out = socket.getOutputStream();
      out.write(new byte[] {0, 0, 0, 0});
      out.flush();
      byte[] answer = {0, 0, 0, 100};
      int[] sent = {0};
      peers.scheduleAtFixedRate(
          () -> {
            try {
              out.write(sent[0] < answer.length ? answer[sent[0]] : 1);
              out.flush();
              sent[0]++;
            } catch (IOException clientGone) {
              throw new IllegalStateException(clientGone);
            }
          },
          300,
          300,
          TimeUnit.MILLISECONDS);
    } catch (IOException closed) {
      // The test ended first.
    }
  }
}
