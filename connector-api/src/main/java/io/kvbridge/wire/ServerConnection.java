package io.kvbridge.wire;

import io.kvbridge.wire.HandshakeChannel.Conversation;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;

/**
 * One connection a {@link TcpHandshakeServer} accepted: its socket, its deadlines, where its
 * conversation stands, and whether its consumer proved itself. Confined to the server's I/O thread.
 */
final class ServerConnection {

  /** Where a connection's conversation stands. */
  enum State {
    /** Sending the greeting. */
    GREETING,
    /** Waiting for the peer's next frame. */
    AWAITING,
    /** A worker is replying to the peer's frame. */
    REPLYING,
    /** Sending a reply. */
    WRITING
  }

  final SocketChannel channel;
  final InetAddress peer;
  final long deadline;
  final long proofDeadline;
  final boolean known;
  SelectionKey key;
  State state = State.GREETING;
  Conversation conversation;
  HandshakeFrames.Reader in;
  ByteBuffer out;
  boolean lastOut;
  int rounds;
  boolean proven;
  boolean closed;

  ServerConnection(
      SocketChannel channel, InetAddress peer, long deadline, long proofDeadline, boolean known) {
    this.channel = channel;
    this.peer = peer;
    this.deadline = deadline;
    this.proofDeadline = proofDeadline;
    this.known = known;
  }

  /** Open, proved nothing, and waiting on its peer rather than on a worker. */
  boolean evictable() {
    return !closed && !proven && state != State.REPLYING;
  }
}
