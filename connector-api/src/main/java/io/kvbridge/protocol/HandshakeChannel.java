package io.kvbridge.protocol;

import java.io.IOException;
import java.time.Duration;
import java.util.function.UnaryOperator;

/**
 * The side channel a consumer uses to reach a producer before any transport metadata is known: one
 * request frame, one response frame.
 *
 * <p>Threads: {@link #exchange} may be called from any thread; a server calls its handler on its
 * own threads.
 */
public interface HandshakeChannel {

  /**
   * Starts answering handshakes.
   *
   * @param requestedAddress the configured address, e.g. {@code tcp://127.0.0.1:0}
   * @param engineId this engine's id, for channels that name addresses after it
   * @param handler turns a request frame into a response frame; must not throw
   * @return the bound server, whose {@link Server#address()} is what consumers dial
   */
  Server serve(String requestedAddress, String engineId, UnaryOperator<byte[]> handler)
      throws IOException;

  /** Sends {@code request} to {@code address} and returns the response frame. */
  byte[] exchange(String address, byte[] request, Duration timeout) throws IOException;

  /**
   * Whether {@link #exchange} may wait on a network; a consumer then handshakes on a background
   * thread so a slow producer never stalls an engine step.
   */
  default boolean mayBlock() {
    return true;
  }

  /** A running handshake server. */
  interface Server extends AutoCloseable {
    /** The address consumers dial. */
    String address();

    /** Stops answering. */
    @Override
    void close();
  }

  /** The channel for an address: {@code local...} in this JVM, {@code tcp://...} over TCP. */
  static HandshakeChannel forAddress(String address) {
    if (address.startsWith(LocalHandshakeChannel.SCHEME) || address.equals("local")) {
      return LocalHandshakeChannel.INSTANCE;
    }
    if (address.startsWith(TcpHandshakeChannel.SCHEME)) {
      return TcpHandshakeChannel.INSTANCE;
    }
    throw new IllegalArgumentException(
        "handshake address '" + address + "' must be 'local' or 'tcp://host:port'");
  }
}
