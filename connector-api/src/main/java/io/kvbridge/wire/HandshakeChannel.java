package io.kvbridge.wire;

import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * The side channel a consumer uses to reach a producer before any transport metadata is known. One
 * connection carries one conversation of three frames: the server's <em>greeting</em>, sent as soon
 * as the connection is accepted (it leaves room for a challenge the consumer must answer); the
 * consumer's <em>request</em>, built from that greeting; and the server's <em>answer</em>. Then the
 * connection ends. A frame is at most {@link Handshake#MAX_FRAME_BYTES} bytes.
 *
 * <p>Threads: {@link #serve} and {@link #exchange} may be called from any thread; a server calls
 * its {@link Responder} on its own threads, as the responder's methods say.
 */
public interface HandshakeChannel {

  /**
   * Starts answering handshakes.
   *
   * @param requestedAddress the configured address, e.g. {@code tcp://127.0.0.1:0}; of this
   *     channel's kind
   * @param engineId this engine's id, for channels that name addresses after it
   * @param responder greets each connection and answers its request
   * @return the bound server, whose {@link Server#address()} is what consumers dial
   * @throws IllegalArgumentException if the address is of another channel's kind
   */
  Server serve(HandshakeAddress requestedAddress, String engineId, Responder responder)
      throws IOException;

  /**
   * Holds one conversation with the server at {@code address}: reads its greeting, sends the
   * request {@code requestForGreeting} builds from it, and returns the answer.
   *
   * @param requestForGreeting builds the request from the greeting; called on the calling thread
   * @param deadline the most the whole conversation may take, connecting included, however slowly
   *     the server sends
   * @throws java.net.SocketTimeoutException if the deadline passes; the message names the address
   *     and what was awaited
   * @throws IOException if the server cannot be reached, closes early or sends a refused frame
   * @throws IllegalArgumentException if the address is of another channel's kind
   */
  byte[] exchange(
      HandshakeAddress address, UnaryOperator<byte[]> requestForGreeting, Duration deadline)
      throws IOException;

  /**
   * Whether {@link #exchange} may wait on a network; a consumer then handshakes on a background
   * thread so a slow producer never stalls an engine step.
   */
  default boolean mayBlock() {
    return true;
  }

  /** The server's side of a conversation. */
  interface Responder {
    /** The first frame of a new connection; cheap, called on the server's I/O thread. */
    byte[] greet();

    /**
     * The answer to {@code request}, sent after {@code greeting}; runs on a worker thread, must not
     * throw.
     */
    byte[] answer(byte[] greeting, byte[] request);
  }

  /** Why a server closed a connection before its conversation ended. */
  enum DropReason {
    /** The conversation was not over by the server's connection deadline. */
    DEADLINE_PASSED,
    /** The peer's address already held as many connections as one address may. */
    ADDRESS_LIMIT,
    /** The server already held as many connections as it may. */
    TOTAL_LIMIT,
    /** The peer announced a frame longer than {@link Handshake#MAX_FRAME_BYTES}, or negative. */
    FRAME_REFUSED
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
