package io.kvbridge.spring.dashboard;

import java.net.URI;
import java.time.Duration;
import java.util.function.Supplier;
import org.springframework.core.io.ClassPathResource;
import org.springframework.core.io.Resource;
import org.springframework.http.CacheControl;
import org.springframework.http.MediaType;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.RouterFunctions;
import org.springframework.web.servlet.function.ServerRequest;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * The operators' dashboard: a static page with its script and style sheet, served from the
 * starter's resources at {@value #PATH}{@code /}, and the page's settings at {@value #PATH}{@code
 * /settings.json}: how often to read the {@code kvbridge} endpoint, how many reads to chart, and
 * where the endpoint is on this server, or why the page cannot read it. The page does everything
 * else in the browser.
 *
 * <p>Thread-safe: immutable; its handlers run on the server's request threads.
 */
public final class KvBridgeDashboard {

  /** Where the dashboard is served, below the servlet context. */
  public static final String PATH = "/kvbridge/dashboard";

  private static final String RESOURCES = "META-INF/kvbridge/dashboard/";

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

  /** The routes that serve the dashboard. */
  public RouterFunction<ServerResponse> routes() {
    Resource index = new ClassPathResource(RESOURCES + "index.html", classLoader());
    return RouterFunctions.route()
        // The page's own files are named relative to it, so it must be read as a directory.
        .GET(PATH, request -> ServerResponse.temporaryRedirect(URI.create("dashboard/")).build())
        .GET(
            PATH + "/",
            request ->
                ServerResponse.ok()
                    .contentType(MediaType.TEXT_HTML)
                    .cacheControl(CacheControl.noCache())
                    .body(index))
        .GET(
            PATH + "/settings.json",
            request ->
                ServerResponse.ok()
                    .contentType(MediaType.APPLICATION_JSON)
                    .cacheControl(CacheControl.noStore())
                    .body(settingsJson(request)))
        .resources(PATH + "/**", new ClassPathResource(RESOURCES, classLoader()))
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

  private static ClassLoader classLoader() {
    return KvBridgeDashboard.class.getClassLoader();
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
