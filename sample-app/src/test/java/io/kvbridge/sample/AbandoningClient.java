package io.kvbridge.sample;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * A client on a plain socket, for tests: sends one HTTP/1.1 POST and then either reads the answer
 * or closes its connection before the answer comes, as a client that goes away does.
 */
public final class AbandoningClient implements AutoCloseable {

  private final Socket socket;

  private AbandoningClient(Socket socket) {
    this.socket = socket;
  }

  /** Sends {@code POST path} with the JSON body {@code json} to this machine's {@code port}. */
  public static AbandoningClient post(int port, String path, String json) {
    try {
      Socket socket = new Socket("127.0.0.1", port);
      byte[] body = json.getBytes(StandardCharsets.UTF_8);
      OutputStream out = socket.getOutputStream();
      out.write(
          ("POST "
                  + path
                  + " HTTP/1.1\r\nHost: 127.0.0.1:"
                  + port
                  + "\r\nContent-Type: application/json\r\nAccept: application/json\r\n"
                  + "Content-Length: "
                  + body.length
                  + "\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII));
      out.write(body);
      out.flush();
      return new AbandoningClient(socket);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Reads the answer's status line, waiting for it; the client stays connected meanwhile. */
  public String statusLine() {
    try {
      StringBuilder line = new StringBuilder();
      for (int c = socket.getInputStream().read();
          c != -1 && c != '\r';
          c = socket.getInputStream().read()) {
        line.append((char) c);
      }
      return line.toString();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Closes the connection: the client goes away. */
  @Override
  public void close() {
    try {
      socket.close();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
