package io.kvbridge.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.kvbridge.wire.HandshakeChannel.DropReason;
import io.kvbridge.wire.TcpHandshakeChannel.Limits;
import java.io.DataInputStream;
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

  /** How long a raw test socket waits for the server before the test fails instead of hanging. */
  private static final int SAFETY_TIMEOUT_MS = 10_000;

  private final List<AutoCloseable> toClose = new CopyOnWriteArrayList<>();
  private final ScheduledExecutorService peers = Executors.newScheduledThreadPool(2);

  @AfterEach
  void closeEverything() throws Exception {
    peers.shutdownNow();
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
  void connectionsBeyondThePerAddressLimitAreClosedAndCounted() throws Exception {
    HandshakeChannel channel =
        TcpHandshakeChannel.withLimits(new Limits(Duration.ofSeconds(10), 2, 1024));
    HandshakeChannel.Server server = serve(channel);
    List<Socket> sameAddress = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      sameAddress.add(connect("127.0.0.5", server));
    }

    assertThat(greetedAmong(sameAddress)).isEqualTo(2);
    assertThat(server.droppedConnections()).containsEntry(DropReason.ADDRESS_LIMIT, 1L);
    assertThat(
            channel.exchange(server.address(), greeting -> new byte[] {4}, Duration.ofSeconds(5)))
        .containsExactly(4);
  }

  @Test
  void connectionsBeyondTheTotalLimitAreClosedAndCounted() throws Exception {
    HandshakeChannel.Server server =
        serve(TcpHandshakeChannel.withLimits(new Limits(Duration.ofSeconds(10), 16, 2)));
    List<Socket> sockets =
        List.of(
            connect("127.0.0.6", server),
            connect("127.0.0.7", server),
            connect("127.0.0.8", server));

    assertThat(greetedAmong(sockets)).isEqualTo(2);
    assertThat(server.droppedConnections()).containsEntry(DropReason.TOTAL_LIMIT, 1L);
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
    assertThat(server.droppedConnections().get(DropReason.ADDRESS_LIMIT)).isPositive();
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
  void totalLimitFarBeyondWhatAHostCanOpenStillServes() throws Exception {
    HandshakeChannel channel =
        TcpHandshakeChannel.withLimits(new Limits(Duration.ofSeconds(10), 16, Integer.MAX_VALUE));
    HandshakeChannel.Server server = serve(channel);

    assertThat(
            channel.exchange(server.address(), greeting -> new byte[] {5}, Duration.ofSeconds(5)))
        .containsExactly(5);
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

  /** A raw client socket from {@code localAddress} (any 127.0.0.0/8 address works on Linux). */
  private Socket connect(String localAddress, HandshakeChannel.Server server) throws IOException {
    Socket socket = new Socket();
    toClose.add(socket);
    socket.bind(new InetSocketAddress(localAddress, 0));
    socket.connect(TcpHandshakeChannel.resolved(server.address()), SAFETY_TIMEOUT_MS);
    socket.setSoTimeout(SAFETY_TIMEOUT_MS);
    return socket;
  }

  private static byte[] readFrame(Socket socket) throws IOException {
    DataInputStream in = new DataInputStream(socket.getInputStream());
    byte[] frame = new byte[in.readInt()];
    in.readFully(frame);
    return frame;
  }

  /** How many of {@code sockets} were greeted; the others must have been closed unanswered. */
  private static int greetedAmong(List<Socket> sockets) throws IOException {
    int greeted = 0;
    for (Socket socket : sockets) {
      int first = socket.getInputStream().read();
      if (first >= 0) {
        greeted++;
      }
    }
    return greeted;
  }

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
