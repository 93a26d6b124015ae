package io.kvbridge.spring.dashboard;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.function.Supplier;
import org.springframework.http.CacheControl;
import org.springframework.http.MediaType;
import org.springframework.web.servlet.function.HandlerFunction;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.RouterFunctions;
import org.springframework.web.servlet.function.ServerRequest;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * The operators' dashboard: a static page with its script and style sheet, served from the
 * starter's resources ({@code META-INF/kvbridge/dashboard/}) at {@value #PATH}{@code /}, and the
 * page's settings beside them in {@code settings.json}: how often to read the {@code kvbridge}
 * endpoint, how many reads to chart, and where the endpoint is on this server, or why the page
 * cannot read it. The page does everything else in the browser.
 *
 * <p>Thread-safe: immutable; its handlers run on the server's request threads.
 */
public final class KvBridgeDashboard {

  /** Where the dashboard is served, below the servlet context. */
  public static final String PATH = "/kvbridge/dashboard";

  private static final String RESOURCES = "META-INF/kvbridge/dashboard/";
  private static final MediaType HTML = new MediaType("text", "html", StandardCharsets.UTF_8);
  private static final MediaType JAVASCRIPT =
      new MediaType("text", "javascript", StandardCharsets.UTF_8);
  private static final MediaType CSS = new MediaType("text", "css", StandardCharsets.UTF_8);

  private final Duration pollInterval;
  private final int historySize;
  private final Supplier<EndpointLocation> endpoint;

  /**
   * A dashboard whose page reads the endpoint every {@code pollInterval}, at where {@code endpoint}
   * says when the page asks, and charts the last {@code historySize} reads.
   */
  public KvBridgeDashboard(
      Duration pollInterval, int historySize, Supplier<EndpointLocation> endpoint) {
    this.pollInterval = pollInterval;
    this.historySize = historySize;
    this.endpoint = endpoint;
  }

  /**
   * The routes that serve the dashboard. Each answer is written as bytes with its own content type,
   * past the application's message converters: a JSON converter placed first would otherwise write
   * the files, and the settings, as JSON values.
   */
  public RouterFunction<ServerResponse> routes() {
    return RouterFunctions.route()
        // The page's own files are named relative to it, so it must be read as a directory.
        .GET(PATH, request -> ServerResponse.temporaryRedirect(URI.create("dashboard/")).build())
        .GET(PATH + "/", file("index.html", HTML))
        .GET(PATH + "/dashboard.js", file("dashboard.js", JAVASCRIPT))
        .GET(PATH + "/dashboard.css", file("dashboard.css", CSS))
        .GET(
            PATH + "/settings.json",
            request ->
                bytes(
                    MediaType.APPLICATION_JSON,
                    CacheControl.noStore(),
                    settingsJson(request).getBytes(StandardCharsets.UTF_8)))
        .build();
  }

  /** The page's settings as JSON, with the endpoint's path as this request's client sees it. */
  String settingsJson(ServerRequest request) {
    StringBuilder json =
        new StringBuilder("{\"pollIntervalMillis\":")
            .append(pollInterval.toMillis())
            .append(",\"historySize\":")
            .append(historySize);
    EndpointLocation location = endpoint.get();
    if (location instanceof EndpointLocation.At at) {
      json.append(",\"endpoint\":")
          .append(quoted(request.requestPath().contextPath().value() + at.path()));
    } else if (location instanceof EndpointLocation.Unreachable unreachable) {
      json.append(",\"endpoint\":null,\"unreachable\":").append(quoted(unreachable.reason()));
    }
    return json.append('}').toString();
  }

  /** The starter's file {@code name}, read once, answered as {@code type}. */
  private static HandlerFunction<ServerResponse> file(String name, MediaType type) {
    byte[] content;
    try (InputStream in =
        KvBridgeDashboard.class.getClassLoader().getResourceAsStream(RESOURCES + name)) {
      if (in == null) {
        throw new IllegalStateException(
            "the dashboard's file " + RESOURCES + name + " is missing from the class path");
      }
      content = in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the dashboard's file " + RESOURCES + name, e);
    }
    // A new version of the starter serves new files: the browser asks again each time.
    return request -> bytes(type, CacheControl.noCache(), content);
  }

  private static ServerResponse bytes(MediaType type, CacheControl cache, byte[] content) {
    return ServerResponse.ok()
        .contentType(type)
        .contentLength(content.length)
        .cacheControl(cache)
        .build(
            (request, response) -> {
              response.getOutputStream().write(content);
              return null;
            });
  }

  /** {@code text} as a JSON string. */
  private static String quoted(String text) {
    StringBuilder out = new StringBuilder(text.length() + 2).append('"');
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        default -> {
          if (c < 0x20 || c == '<' || c == '>' || c == '&') {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    return out.append('"').toString();
  }

  /** Where the page finds the {@code kvbridge} endpoint, as this server knows it. */
  public sealed interface EndpointLocation {

    /**
     * Served by this server.
     *
     * @param path its path below the servlet context, e.g. {@code /actuator/kvbridge}
     */
    record At(String path) implements EndpointLocation {}

    /**
     * Not readable by the page.
     *
     * @param reason why, and what to configure, for the operator
     */
    record Unreachable(String reason) implements EndpointLocation {}
  }
}
