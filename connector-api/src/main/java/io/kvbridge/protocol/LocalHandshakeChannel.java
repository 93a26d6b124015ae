package io.kvbridge.protocol;

import java.io.IOException;
import java.net.ConnectException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.UnaryOperator;

/**
 * Handshakes between engines in one JVM: addresses are {@code local://<engine id>}. Frames are
 * still encoded and decoded, so the same checks apply as over a network.
 */
public final class LocalHandshakeChannel implements HandshakeChannel {

  /** The address prefix. */
  public static final String SCHEME = "local://";

  static final LocalHandshakeChannel INSTANCE = new LocalHandshakeChannel();

  private final Map<String, UnaryOperator<byte[]>> servers = new ConcurrentHashMap<>();

  private LocalHandshakeChannel() {}

  @Override
  public Server serve(String requestedAddress, String engineId, UnaryOperator<byte[]> handler)
      throws IOException {
    String address = SCHEME + engineId;
    if (servers.putIfAbsent(address, handler) != null) {
      throw new IOException(
          "handshake address " + address + " is taken: engine ids must be unique in one JVM");
    }
    return new Server() {
      @Override
      public String address() {
        return address;
      }

      @Override
      public void close() {
        servers.remove(address, handler);
      }
    };
  }

  /** A call within this JVM: it never waits on a network. */
  @Override
  public boolean mayBlock() {
    return false;
  }

  @Override
  public byte[] exchange(String address, byte[] request, Duration timeout) throws IOException {
    UnaryOperator<byte[]> handler = servers.get(address);
    if (handler == null) {
      throw new ConnectException("no engine answers handshakes at " + address);
    }
    return handler.apply(request.clone());
  }
}
