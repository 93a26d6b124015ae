package io.kvbridge.sample.router;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An HTTP proxy in front of a server, for tests: forwards every request to the same path on the
 * target, and while {@link #hold() held} keeps the target's answers to completions until {@link
 * #release()}, so that a test can act while a node has answered and the router does not know yet.
 */
final class HoldingProxy implements AutoCloseable {

  private final HttpServer server;
  private final ExecutorService threads = Executors.newCachedThreadPool();
  private final HttpClient client =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private final AtomicInteger held = new AtomicInteger();
  private volatile URI target = URI.create("http://127.0.0.1:1");
  private volatile CountDownLatch gate = new CountDownLatch(0);

  private HoldingProxy(HttpServer server) {
    this.server = server;
    server.createContext("/", this::forward);
    server.setExecutor(threads);
    server.start();
  }

  /** A proxy on a free port of this machine, forwarding nowhere until {@link #target} is set. */
  static HoldingProxy start() {
    try {
      return new HoldingProxy(HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Where requests go: {@code origin} and the request's path. */
  void target(URI origin) {
    target = origin;
  }

  /** The proxy's own origin. */
  URI url() {
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
  }

  /** From now on, answers to completions wait for {@link #release()}. */
  void hold() {
    gate = new CountDownLatch(1);
  }

  /** Lets the held answers, and every later one, through. */
  void release() {
    gate.countDown();
  }

  /** How many answers wait now. */
  int held() {
    return held.get();
  }

  @Override
  public void close() {
    release();
    server.stop(0);
    threads.shutdownNow();
  }

  private void forward(HttpExchange exchange) throws IOException {
    try (exchange) {
      byte[] body;
      try (InputStream in = exchange.getRequestBody()) {
        body = in.readAllBytes();
      }
      String path = exchange.getRequestURI().toString();
      HttpRequest.Builder request =
          HttpRequest.newBuilder(target.resolve(path))
              .method(exchange.getRequestMethod(), HttpRequest.BodyPublishers.ofByteArray(body));
      for (String header : new String[] {"Content-Type", "Accept"}) {
        String value = exchange.getRequestHeaders().getFirst(header);
        if (value != null) {
          request.header(header, value);
        }
      }
      HttpResponse<byte[]> answer =
          client.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
      if (path.endsWith("/v1/completions")) {
        held.incrementAndGet();
        try {
          gate.await();
        } finally {
          held.decrementAndGet();
        }
      }
      answer
          .headers()
          .firstValue("Content-Type")
          .ifPresent(type -> exchange.getResponseHeaders().add("Content-Type", type));
      exchange.sendResponseHeaders(answer.statusCode(), answer.body().length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(answer.body());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
