package io.kvbridge.wire;

import io.kvbridge.net.DropReason;
import io.kvbridge.net.HandshakeAddress;
import java.io.EOFException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Handshakes over TCP: {@code tcp://host:port}, one conversation of three length-prefixed frames
 * per connection (see {@link HandshakeChannel}).
 *
 * <p>The server cannot be starved by peers that connect and say nothing, or trickle bytes: one
 * selector thread does all socket I/O without blocking, each connection has a deadline from accept
 * to answer written, and connections per remote address and in all are capped (see {@link Limits}
 * and {@link TcpHandshakeServer}). The client bounds the whole conversation by its deadline,
 * however slowly the server sends.
 *
 * <p>Threads: immutable; any thread may call any method.
 */
public final class TcpHandshakeChannel implements HandshakeChannel {

  static final TcpHandshakeChannel INSTANCE = new TcpHandshakeChannel(Limits.DEFAULTS);

  private final Limits limits;

  private TcpHandshakeChannel(Limits limits) {
    this.limits = limits;
  }

  /**
   * What a server tolerates before it closes a connection; each closed connection is counted under
   * its {@link DropReason}.
   *
   * @param connectionDeadline the most a connection may take from accept until its answer is
   *     written; positive
   * @param perAddress the most connections open at once from one remote IP address; at least 1
   * @param total the most connections open at once; at least 1
   * @param proofDeadline the most a connection may take from accept until the consumer has proved
   *     itself (a request that authenticated, or without a secret a well-formed request); positive,
   *     at most {@code connectionDeadline}
   * @param reservedForKnown how many of the {@code total} places only addresses this server served
   *     before may take; 0 to {@code total - 1}
   */
  public record Limits(
      Duration connectionDeadline,
      int perAddress,
      int total,
      Duration proofDeadline,
      int reservedForKnown) {

    /**
     * 5 s per connection, 1 s to prove itself, 16 connections per remote address, 1024 in all of
     * which 128 are kept for addresses served before.
     */
    public static final Limits DEFAULTS =
        new Limits(Duration.ofSeconds(5), 16, 1024, Duration.ofSeconds(1), 128);

    /** Checks each limit. */
    public Limits {
      Objects.requireNonNull(connectionDeadline, "connectionDeadline");
      Objects.requireNonNull(proofDeadline, "proofDeadline");
      if (connectionDeadline.isNegative() || connectionDeadline.isZero()) {
        throw new IllegalArgumentException(
            "handshake connectionDeadline must be positive, was " + connectionDeadline);
      }
      if (perAddress < 1) {
        throw new IllegalArgumentException(
            "handshake perAddress limit must be at least 1, was " + perAddress);
      }
      if (total < 1) {
        throw new IllegalArgumentException(
            "handshake total connection limit must be at least 1, was " + total);
      }
      if (proofDeadline.isNegative()
          || proofDeadline.isZero()
          || proofDeadline.compareTo(connectionDeadline) > 0) {
        throw new IllegalArgumentException(
            "handshake proofDeadline must be positive and at most the connectionDeadline ("
                + connectionDeadline
                + "), was "
                + proofDeadline);
      }
      if (reservedForKnown < 0 || reservedForKnown >= total) {
        throw new IllegalArgumentException(
            "handshake reservedForKnown must be 0 to total - 1 ("
                + (total - 1)
                + "), was "
                + reservedForKnown);
      }
    }

    /**
     * Limits with {@code connectionDeadline}, {@code perAddress} and {@code total}, a proof
     * deadline of 1 s (or the connection deadline if shorter) and an eighth of the places kept for
     * addresses served before.
     */
    public Limits(Duration connectionDeadline, int perAddress, int total) {
      this(
          connectionDeadline,
          perAddress,
          total,
          connectionDeadline == null || connectionDeadline.compareTo(Duration.ofSeconds(1)) > 0
              ? Duration.ofSeconds(1)
              : connectionDeadline,
          total / 8);
    }
  }

  /** A TCP channel whose servers apply {@code limits}; clients are the same for every channel. */
  public static TcpHandshakeChannel withLimits(Limits limits) {
    return new TcpHandshakeChannel(Objects.requireNonNull(limits, "limits"));
  }

  /** The limits this channel's servers apply. */
  public Limits limits() {
    return limits;
  }

  @Override
  public Server serve(HandshakeAddress requestedAddress, String engineId, Responder responder)
      throws IOException {
    return TcpHandshakeServer.start(
        resolved(requestedAddress), engineId, Objects.requireNonNull(responder), limits);
  }

  @Override
  public byte[] converse(HandshakeAddress address, Dialogue dialogue, Duration deadline)
      throws IOException {
    InetSocketAddress target = resolved(address);
    try (Conversation conversation = new Conversation(address, deadline)) {
      conversation.connect(target);
      byte[] received = conversation.read("the greeting");
      for (int round = 0; ; round++) {
        Optional<byte[]> next = dialogue.next(received);
        if (next.isEmpty()) {
          return received;
        }
        if (round == MAX_ROUNDS) {
          throw HandshakeFrames.tooManyRounds(address);
        }
        byte[] frame = next.get();
        if (frame.length > Handshake.MAX_FRAME_BYTES) {
          throw new IOException(
              "handshake request of "
                  + frame.length
                  + " bytes refused; limit "
                  + Handshake.MAX_FRAME_BYTES);
        }
        conversation.write(frame);
        received = conversation.read(round == 0 ? "the answer" : "answer " + (round + 1));
      }
    }
  }

  /** The socket address of {@code address}, resolved. */
  static InetSocketAddress resolved(HandshakeAddress address) throws UnknownHostException {
    if (!(address instanceof HandshakeAddress.Tcp tcp)) {
      throw new IllegalArgumentException(
          "the TCP handshake channel cannot reach " + address + "; use a tcp://host:port address");
    }
    InetSocketAddress resolved = new InetSocketAddress(tcp.host(), tcp.port());
    if (resolved.isUnresolved()) {
      throw new UnknownHostException(
          "handshake address '" + address + "' names a host that does not resolve");
    }
    return resolved;
  }

  /** {@code duration} in nanoseconds, saturated rather than overflowing. */
  static long saturatedNanos(Duration duration) {
    try {
      return duration.toNanos();
    } catch (ArithmeticException tooLong) {
      return duration.isNegative() ? Long.MIN_VALUE : Long.MAX_VALUE;
    }
  }

  /**
   * The client's side of one conversation: a non-blocking socket and a selector of its own, so
   * every wait is bounded by what is left of the deadline rather than by a per-read timeout a
   * trickling peer could reset byte by byte.
   */
  private static final class Conversation implements AutoCloseable {
    private final HandshakeAddress address;
    private final Duration deadline;
    private final long startNanos = System.nanoTime();
    private final long deadlineNanos;
    private final SocketChannel channel;
    private final Selector selector;
    private final SelectionKey key;

    Conversation(HandshakeAddress address, Duration deadline) throws IOException {
      this.address = address;
      this.deadline = deadline;
      this.deadlineNanos = saturatedNanos(deadline);
      this.selector = Selector.open();
      try {
        this.channel = SocketChannel.open();
      } catch (IOException | RuntimeException e) {
        selector.close();
        throw e;
      }
      try {
        channel.configureBlocking(false);
        this.key = channel.register(selector, 0);
      } catch (IOException | RuntimeException e) {
        close();
        throw e;
      }
    }

    void connect(InetSocketAddress target) throws IOException {
      if (channel.connect(target)) {
        return;
      }
      while (!channel.finishConnect()) {
        await(SelectionKey.OP_CONNECT, "for a connection");
      }
    }

    /** Reads one frame; {@code what} names it in errors, e.g. "the greeting". */
    byte[] read(String what) throws IOException {
      HandshakeFrames.Reader frame = new HandshakeFrames.Reader();
      try {
        while (!frame.readFrom(channel)) {
          await(SelectionKey.OP_READ, "for " + what);
        }
      } catch (EOFException e) {
        throw new EOFException(address + " closed the connection before sending " + what);
      }
      return frame.payload();
    }

    void write(byte[] request) throws IOException {
      ByteBuffer frame = HandshakeFrames.encode(request);
      channel.write(frame);
      while (frame.hasRemaining()) {
        await(SelectionKey.OP_WRITE, "to send the request");
        channel.write(frame);
      }
    }

    /**
     * Waits until the socket is ready for {@code ops}, or fails once the deadline has passed;
     * {@code waitingFor} completes "while waiting ...".
     */
    private void await(int ops, String waitingFor) throws IOException {
      long left = deadlineNanos - (System.nanoTime() - startNanos);
      if (left <= 0) {
        throw new SocketTimeoutException(
            "handshake deadline of "
                + deadline.toMillis()
                + " ms passed at "
                + address
                + " while waiting "
                + waitingFor);
      }
      if (Thread.currentThread().isInterrupted()) {
        throw new InterruptedIOException(
            "handshake with " + address + " interrupted while waiting " + waitingFor);
      }
      key.interestOps(ops);
      selector.select(ceilMillis(left));
      selector.selectedKeys().clear();
    }

    @Override
    public void close() throws IOException {
      try (channel) {
        selector.close();
      }
    }
  }

  /** {@code nanos} as milliseconds, rounded up so a wait never ends just before a deadline. */
  static long ceilMillis(long nanos) {
    long millis = TimeUnit.NANOSECONDS.toMillis(nanos);
    return Math.max(1, nanos % 1_000_000 == 0 ? millis : millis + 1);
  }
}
