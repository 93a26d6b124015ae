package io.kvbridge.wire;

import io.kvbridge.net.DropReason;
import io.kvbridge.net.HandshakeAddress;
import io.kvbridge.observe.EnumCounters;
import java.io.IOException;
import java.net.ConnectException;
import java.time.Duration;
import java.util.Collections;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Handshakes between engines in one JVM: addresses are {@code local://<name>}, where a server
 * requested as plain {@code local} is named after its engine id. The same conversation as over a
 * network, called on the consumer's thread: each frame crosses as a copy and is held to {@link
 * Handshake#MAX_FRAME_BYTES}, so the same checks apply as over a network.
 *
 * <p>Threads: any thread may call any method; a responder runs on the thread that calls {@link
 * #exchange}.
 */
public final class LocalHandshakeChannel implements HandshakeChannel {

  static final LocalHandshakeChannel INSTANCE = new LocalHandshakeChannel();

  private static final Map<DropReason, Long> NONE_DROPPED =
      Collections.unmodifiableMap(new EnumCounters<>(DropReason.class).snapshot());

  private final Map<HandshakeAddress, Responder> servers = new ConcurrentHashMap<>();

  private LocalHandshakeChannel() {}

  @Override
  public Server serve(HandshakeAddress requestedAddress, String engineId, Responder responder)
      throws IOException {
    HandshakeAddress.Local address =
        HandshakeAddress.Local.named(local(requestedAddress).name().orElse(engineId));
    if (servers.putIfAbsent(address, responder) != null) {
      throw new IOException(
          "handshake address "
              + address
              + " is taken: engine ids and local names must be unique in one JVM");
    }
    return new Server() {
      @Override
      public HandshakeAddress address() {
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
  public byte[] converse(HandshakeAddress address, Dialogue dialogue, Duration deadline)
      throws IOException {
    Responder responder = servers.get(local(address));
    if (responder == null) {
      throw new ConnectException("no engine answers handshakes at " + address);
    }
    Conversation conversation = responder.open();
    byte[] received = checked(conversation.greeting(), "greeting");
    for (int round = 0; ; round++) {
      Optional<byte[]> next = dialogue.next(received.clone());
      if (next.isEmpty()) {
        return received.clone();
      }
      if (round == MAX_ROUNDS) {
        throw HandshakeFrames.tooManyRounds(address);
      }
      Reply reply = conversation.reply(checked(next.get(), "request").clone());
      received = checked(reply.frame(), "answer");
      if (reply.last()) {
        if (dialogue.next(received.clone()).isPresent()) {
          throw new IOException(
              address + " ended the conversation while the consumer had more to send");
        }
        return received.clone();
      }
    }
  }

  private static HandshakeAddress.Local local(HandshakeAddress address) {
    if (address instanceof HandshakeAddress.Local local) {
      return local;
    }
    throw new IllegalArgumentException(
        "the in-JVM handshake channel cannot reach " + address + "; use a local address");
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
