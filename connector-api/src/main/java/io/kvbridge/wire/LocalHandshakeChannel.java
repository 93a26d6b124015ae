package io.kvbridge.wire;

import io.kvbridge.observe.EnumCounters;
import java.io.IOException;
import java.net.ConnectException;
import java.time.Duration;
import java.util.Collections;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.UnaryOperator;

/**
 * Handshakes between engines in one JVM: addresses are {@code local://<engine id>}. The same
 * three-frame conversation as over a network, called on the consumer's thread: each frame crosses
 * as a copy and is held to {@link Handshake#MAX_FRAME_BYTES}, so the same checks apply as over a
 * network.
 *
 * <p>Threads: any thread may call any method; a responder runs on the thread that calls {@link
 * #exchange}.
 */
public final class LocalHandshakeChannel implements HandshakeChannel {

  /** The address prefix. */
  public static final String SCHEME = "local://";

  static final LocalHandshakeChannel INSTANCE = new LocalHandshakeChannel();

  private static final Map<DropReason, Long> NONE_DROPPED =
      Collections.unmodifiableMap(new EnumCounters<>(DropReason.class).snapshot());

  private final Map<String, Responder> servers = new ConcurrentHashMap<>();

  private LocalHandshakeChannel() {}

  @Override
  public Server serve(String requestedAddress, String engineId, Responder responder)
      throws IOException {
    String address = SCHEME + engineId;
    if (servers.putIfAbsent(address, responder) != null) {
      throw new IOException(
          "handshake address " + address + " is taken: engine ids must be unique in one JVM");
    }
    return new Server() {
      @Override
      public String address() {
        return address;
      }

      @Override
      public Map<DropReason, Long> droppedConnections() {
        return NONE_DROPPED;
      }

      @Override
      public void close() {
        servers.remove(address, responder);
      }
    };
  }

  /** A call within this JVM: it never waits on a network. */
  @Override
  public boolean mayBlock() {
    return false;
  }

  @Override
  public byte[] exchange(
      String address, UnaryOperator<byte[]> requestForGreeting, Duration deadline)
      throws IOException {
    Responder responder = servers.get(address);
    if (responder == null) {
      throw new ConnectException("no engine answers handshakes at " + address);
    }
    byte[] greeting = checked(responder.greet(), "greeting");
    byte[] request = checked(requestForGreeting.apply(greeting.clone()), "request");
    return checked(responder.answer(greeting, request.clone()), "answer").clone();
  }

  private static byte[] checked(byte[] frame, String what) throws IOException {
    if (frame.length > Handshake.MAX_FRAME_BYTES) {
      throw new IOException(
          "handshake "
              + what
              + " of "
              + frame.length
              + " bytes refused; limit "
              + Handshake.MAX_FRAME_BYTES);
    }
    return frame;
  }
}
