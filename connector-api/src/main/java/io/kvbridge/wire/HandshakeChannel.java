package io.kvbridge.wire;

import io.kvbridge.net.DropReason;
import io.kvbridge.net.HandshakeAddress;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.UnaryOperator;

/**
 * The side channel a consumer uses to reach a producer before any transport metadata is known. One
 * connection carries one conversation: the server's <em>greeting</em>, sent as soon as the
 * connection is accepted; then, in turn, a frame of the consumer's and the server's reply to it,
 * until the server's reply is its last (at most {@value #MAX_ROUNDS} rounds: the handshake has one
 * without a secret and two with one). Then the connection ends. A frame is at most {@link
 * Handshake#MAX_FRAME_BYTES} bytes.
 *
 * <p>Threads: {@link #serve}, {@link #converse} and {@link #exchange} may be called from any
 * thread; a server calls its {@link Responder} and {@link Conversation}s on its own threads, as
 * their methods say.
 */
public interface HandshakeChannel {

  /** The most frames a consumer may send in one conversation. */
  int MAX_ROUNDS = 2;

  /**
   * Starts answering handshakes.
   *
   * @param requestedAddress the configured address, e.g. {@code tcp://127.0.0.1:0}; of this
   *     channel's kind
   * @param engineId this engine's id, for channels that name addresses after it
   * @param responder opens a conversation for each connection
   * @return the bound server, whose {@link Server#address()} is what consumers dial
   * @throws IllegalArgumentException if the address is of another channel's kind
   */
  Server serve(HandshakeAddress requestedAddress, String engineId, Responder responder)
      throws IOException;

  /**
   * Holds one conversation with the server at {@code address}: reads its greeting, then hands each
   * frame it receives to {@code dialogue} and sends what the dialogue answers, until the dialogue
   * has nothing more to send; returns the last frame received.
   *
   * @param dialogue the consumer's side of the conversation; called on the calling thread
   * @param deadline the most the whole conversation may take, connecting included, however slowly
   *     the server sends
   * @throws java.net.SocketTimeoutException if the deadline passes; the message names the address
   *     and what was awaited
   * @throws IOException if the server cannot be reached, closes early, sends a refused frame, or
   *     the dialogue refuses a frame (its exception is thrown as it is)
   * @throws IllegalArgumentException if the address is of another channel's kind
   */
  byte[] converse(HandshakeAddress address, Dialogue dialogue, Duration deadline)
      throws IOException;

  /**
   * A conversation of one round: reads the greeting, sends the request {@code requestForGreeting}
   * builds from it, and returns the answer. See {@link #converse}.
   */
  default byte[] exchange(
      HandshakeAddress address, UnaryOperator<byte[]> requestForGreeting, Duration deadline)
      throws IOException {
    boolean[] sent = new boolean[1];
    return converse(
        address,
        received -> {
          if (sent[0]) {
            return Optional.empty();
          }
          sent[0] = true;
          return Optional.of(requestForGreeting.apply(received));
        },
        deadline);
  }

  /**
   * Whether {@link #converse} may wait on a network; a consumer then handshakes on a background
   * thread so a slow producer never stalls an engine step.
   */
  default boolean mayBlock() {
    return true;
  }

  /** The consumer's side of a conversation. Not thread-safe: one conversation, one thread. */
  @FunctionalInterface
  interface Dialogue {
    /**
     * The frame to send in answer to {@code received} (the greeting first, then each reply), or
     * empty when the conversation is over.
     *
     * @throws IOException if {@code received} is refused; the conversation ends with it
     */
    Optional<byte[]> next(byte[] received) throws IOException;
  }

  /** The server's side of the channel: opens a conversation per connection. */
  @FunctionalInterface
  interface Responder {
    /** A conversation for a newly accepted connection; cheap, called on the server's I/O thread. */
    Conversation open();
  }

  /** The server's side of one conversation. */
  interface Conversation {
    /** The first frame; called once, on the server's I/O thread, right after {@link #open}. */
    byte[] greeting();

    /**
     * The reply to the consumer's next frame; runs on a worker thread, one call at a time, and must
     * not throw.
     */
    Reply reply(byte[] frame);
  }

  /**
   * The server's reply to one frame of the consumer's.
   *
   * @param frame what to send
   * @param last whether the conversation ends once it is sent
   * @param proven whether the consumer has proved itself in this conversation (with a secret, a
   *     request that authenticated; without, a well-formed request): a server keeps such a
   *     connection when it must make room for others
   * @param served whether the conversation ends with the consumer accepted: a server keeps room for
   *     the addresses it served before
   */
  record Reply(byte[] frame, boolean last, boolean proven, boolean served) {
    /** The frame is handed over, not copied. */
    public Reply {
      Objects.requireNonNull(frame, "frame");
    }

    /** A reply after which the consumer sends another frame. */
    public static Reply more(byte[] frame) {
      return new Reply(frame, false, false, false);
    }

    /** The last reply, to a consumer that proved nothing. */
    public static Reply end(byte[] frame) {
      return new Reply(frame, true, false, false);
    }
  }

  /** A running handshake server. Its methods may be called from any thread. */
  interface Server extends AutoCloseable {
    /** The address consumers dial. */
    HandshakeAddress address();

    /**
     * How many connections this server has dropped, by reason, since it started; every reason is
     * present. A channel that never drops a connection answers zeros.
     */
    Map<DropReason, Long> droppedConnections();

    /** Stops answering, closes every connection and ends the server's threads. */
    @Override
    void close();
  }

  /** The channel for an address: in this JVM for a local one, over TCP for a tcp one. */
  static HandshakeChannel forAddress(HandshakeAddress address) {
    return address instanceof HandshakeAddress.Local
        ? LocalHandshakeChannel.INSTANCE
        : TcpHandshakeChannel.INSTANCE;
  }
}
