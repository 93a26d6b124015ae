package io.kvbridge.wire;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.net.HandshakeAddress;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Raw client sockets that drive a TCP handshake server frame by frame, from any 127.0.0.0/8 address
 * (Linux answers on all of them), so a test picks the remote address the server sees. Closes every
 * socket it opened on {@link #close()}.
 */
final class LoopbackPeers implements AutoCloseable {

  /** How long a raw socket waits for the server before the test fails instead of hanging. */
  static final int SAFETY_TIMEOUT_MS = 10_000;

  private final List<Socket> sockets = new CopyOnWriteArrayList<>();

  /** A socket from {@code localAddress} connected to {@code server}. */
  Socket connect(String localAddress, HandshakeAddress server) throws IOException {
    return connect(localAddress, server, 0);
  }

  /**
   * A socket from {@code localAddress} connected to {@code server}, receiving into a buffer of
   * about {@code receiveBufferBytes} (0 for the system's default), so a server writing to it fills
   * the buffers soon once this socket stops reading.
   */
  Socket connect(String localAddress, HandshakeAddress server, int receiveBufferBytes)
      throws IOException {
    Socket socket = new Socket();
    sockets.add(socket);
    if (receiveBufferBytes > 0) {
      socket.setReceiveBufferSize(receiveBufferBytes);
    }
    socket.bind(new InetSocketAddress(localAddress, 0));
    socket.connect(TcpHandshakeChannel.resolved(server), SAFETY_TIMEOUT_MS);
    socket.setSoTimeout(SAFETY_TIMEOUT_MS);
    return socket;
  }

  /** Reads one length-prefixed frame. */
  static byte[] readFrame(Socket socket) throws IOException {
    DataInputStream in = new DataInputStream(socket.getInputStream());
    byte[] frame = new byte[in.readInt()];
    in.readFully(frame);
    return frame;
  }

  /** Writes one length-prefixed frame. */
  static void writeFrame(Socket socket, byte[] payload) throws IOException {
    DataOutputStream out = new DataOutputStream(socket.getOutputStream());
    out.writeInt(payload.length);
    out.write(payload);
    out.flush();
  }

  /**
   * Sends {@code request} on a greeted socket and returns the answer, after checking that the
   * server then closed the connection.
   */
  static byte[] converse(Socket greeted, byte[] request) throws IOException {
    writeFrame(greeted, request);
    byte[] answer = readFrame(greeted);
    assertClosedByServer(greeted);
    return answer;
  }

  /**
   * Checks that the server closed {@code socket} with nothing more to read: an orderly end, or a
   * reset where the server closed with bytes of ours unread.
   */
  static void assertClosedByServer(Socket socket) throws IOException {
    int next;
    try {
      next = socket.getInputStream().read();
    } catch (SocketException reset) {
      assertThat(reset).hasMessageContaining("reset");
      return;
    }
    assertThat(next).as("the first byte after the server closed").isEqualTo(-1);
  }

  @Override
  public void close() throws IOException {
    for (Socket socket : sockets) {
      socket.close();
    }
  }
}
