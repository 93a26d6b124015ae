package io.kvbridge.protocol;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;

/**
 * Handshakes over TCP: {@code tcp://host:port}. One length-prefixed frame each way per connection;
 * frames larger than {@link Handshake#MAX_FRAME_BYTES} are refused; every socket has a read timeout
 * so a silent peer cannot hold a thread.
 */
public final class TcpHandshakeChannel implements HandshakeChannel {

  /** The address prefix. */
  public static final String SCHEME = "tcp://";

  static final TcpHandshakeChannel INSTANCE = new TcpHandshakeChannel();

  private static final System.Logger LOG = System.getLogger(TcpHandshakeChannel.class.getName());
  private static final int SERVER_THREADS = 4;
  private static final int SERVER_READ_TIMEOUT_MS = 5_000;

  private TcpHandshakeChannel() {}

  @Override
  public Server serve(String requestedAddress, String engineId, UnaryOperator<byte[]> handler)
      throws IOException {
    InetSocketAddress bind = parse(requestedAddress);
    ServerSocket socket = new ServerSocket();
    socket.setReuseAddress(true);
    socket.bind(bind);
    AtomicInteger threadCount = new AtomicInteger();
    ExecutorService workers =
        Executors.newFixedThreadPool(
            SERVER_THREADS,
            r -> {
              Thread t =
                  new Thread(
                      r, "kvbridge-handshake-" + engineId + "-" + threadCount.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    Thread acceptor =
        new Thread(
            () -> acceptLoop(socket, workers, handler), "kvbridge-handshake-accept-" + engineId);
    acceptor.setDaemon(true);
    acceptor.start();
    String host = bind.getAddress().isAnyLocalAddress() ? "127.0.0.1" : bind.getHostString();
    String address = SCHEME + host + ":" + socket.getLocalPort();
    return new Server() {
      @Override
      public String address() {
        return address;
      }

      @Override
      public void close() {
        try {
          socket.close();
        } catch (IOException e) {
          LOG.log(System.Logger.Level.DEBUG, "closing handshake socket", e);
        }
        workers.shutdownNow();
      }
    };
  }

  @Override
  public byte[] exchange(String address, byte[] request, Duration timeout) throws IOException {
    int millis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis()));
    try (Socket socket = new Socket()) {
      socket.connect(parse(address), millis);
      socket.setSoTimeout(millis);
      writeFrame(new DataOutputStream(socket.getOutputStream()), request);
      return readFrame(new DataInputStream(socket.getInputStream()));
    }
  }

  private static void acceptLoop(
      ServerSocket server, ExecutorService workers, UnaryOperator<byte[]> handler) {
    while (!server.isClosed()) {
      Socket client;
      try {
        client = server.accept();
      } catch (SocketException closed) {
        return;
      } catch (IOException e) {
        LOG.log(System.Logger.Level.WARNING, "accepting a handshake connection failed", e);
        continue;
      }
      try {
        workers.execute(() -> answer(client, handler));
      } catch (RejectedExecutionException shuttingDown) {
        closeQuietly(client);
        return;
      }
    }
  }

  private static void answer(Socket client, UnaryOperator<byte[]> handler) {
    try (client) {
      client.setSoTimeout(SERVER_READ_TIMEOUT_MS);
      byte[] request = readFrame(new DataInputStream(client.getInputStream()));
      writeFrame(new DataOutputStream(client.getOutputStream()), handler.apply(request));
    } catch (IOException e) {
      LOG.log(
          System.Logger.Level.DEBUG,
          "handshake connection from " + client.getRemoteSocketAddress() + " dropped",
          e);
    }
  }

  private static void writeFrame(DataOutputStream out, byte[] frame) throws IOException {
    out.writeInt(frame.length);
    out.write(frame);
    out.flush();
  }

  private static byte[] readFrame(DataInputStream in) throws IOException {
    int length = in.readInt();
    if (length < 0 || length > Handshake.MAX_FRAME_BYTES) {
      throw new IOException(
          "handshake frame of " + length + " bytes refused; limit " + Handshake.MAX_FRAME_BYTES);
    }
    byte[] frame = new byte[length];
    in.readFully(frame);
    return frame;
  }

  private static void closeQuietly(Socket socket) {
    try {
      socket.close();
    } catch (IOException e) {
      LOG.log(System.Logger.Level.DEBUG, "closing a refused connection", e);
    }
  }

  static InetSocketAddress parse(String address) {
    URI uri;
    try {
      uri = URI.create(address);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("handshake address '" + address + "' is not a URI", e);
    }
    if (!"tcp".equals(uri.getScheme()) || uri.getHost() == null || uri.getPort() < 0) {
      throw new IllegalArgumentException(
          "handshake address '" + address + "' must look like tcp://host:port");
    }
    return new InetSocketAddress(uri.getHost(), uri.getPort());
  }
}
