package io.kvbridge.sample.browser;

import static org.awaitility.Awaitility.await;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * A headless Chromium for tests, driven over the DevTools protocol with the JDK's own WebSocket
 * client: one browser process with a fresh profile, one page. Chromium is found as {@link #binary}
 * says; {@link RequiresChromium} skips or fails a test class where there is none.
 *
 * <p>Chromium runs without its sandbox: the tests run it as whatever user the build runs as, often
 * root in a container, where the sandbox cannot start; it loads only the application under test.
 *
 * <p>Threads: one test thread at a time; the WebSocket's listener completes the answers.
 */
public final class HeadlessChromium implements AutoCloseable {

  /** The binary to run: {@code -Dchromium.binary=PATH} in the build, else from the PATH. */
  static final String BINARY_PROPERTY = "kvbridge.test.chromium-binary";

  private static final Duration START = Duration.ofSeconds(30);
  private static final Duration ANSWER = Duration.ofSeconds(30);
  private static final Duration POLL = Duration.ofMillis(50);
  private static final List<String> NAMES = List.of("chromium", "chromium-browser");

  private static volatile Found found;

  private final Process process;
  private final Path profile;
  private final WebSocket socket;
  private final AtomicInteger ids = new AtomicInteger();
  private final Map<Integer, CompletableFuture<JsonNode>> answers = new ConcurrentHashMap<>();
  private final List<String> scriptErrors = new ArrayList<>();

  private HeadlessChromium(Process process, Path profile, WebSocket socket) {
    this.process = process;
    this.profile = profile;
    this.socket = socket;
  }

  /** The Chromium the tests run, with its version, or why there is none usable here. */
  static Found binary() {
    Found known = found;
    if (known == null) {
      known = find();
      found = known;
    }
    return known;
  }

  /**
   * Starts Chromium with a fresh profile and a viewport of {@code width} by {@code height} CSS
   * pixels, its log in {@code logFile}, and connects to its blank page.
   */
  public static HeadlessChromium start(int width, int height, Path logFile) {
    Found chromium = binary();
    if (chromium.binary().isEmpty()) {
      throw new IllegalStateException(chromium.description());
    }
    Path profile;
    Process process;
    try {
      profile = Files.createTempDirectory("kvbridge-chromium-");
      Files.createDirectories(logFile.toAbsolutePath().getParent());
      process =
          new ProcessBuilder(
                  chromium.binary().get().toString(),
                  "--headless",
                  "--no-sandbox",
                  "--disable-gpu",
                  "--disable-dev-shm-usage",
                  "--disable-extensions",
                  "--disable-background-networking",
                  "--no-first-run",
                  "--no-default-browser-check",
                  "--hide-scrollbars",
                  "--remote-debugging-address=127.0.0.1",
                  "--remote-debugging-port=0",
                  "--user-data-dir=" + profile,
                  "--window-size=" + width + "," + height,
                  "about:blank")
              .redirectErrorStream(true)
              .redirectOutput(logFile.toFile())
              .start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start " + chromium.description(), e);
    }
    try {
      URI page = blankPage(process, profile, logFile);
      HeadlessChromium browser = connect(process, profile, page);
      browser.call("Runtime.enable", Map.of());
      browser.call(
          "Emulation.setDeviceMetricsOverride",
          Map.of("width", width, "height", height, "deviceScaleFactor", 1, "mobile", false));
      return browser;
    } catch (RuntimeException e) {
      stop(process);
      deleteProfile(profile);
      throw e;
    }
  }

  /** Loads {@code url} in the page and waits until its document has loaded. */
  public void open(String url) {
    call("Page.enable", Map.of());
    JsonNode navigated = call("Page.navigate", Map.of("url", url));
    if (navigated.has("errorText")) {
      throw new IllegalStateException(
          "Chromium cannot load " + url + ": " + navigated.get("errorText").asString());
    }
    await(url + " loaded")
        .atMost(ANSWER)
        .pollInterval(POLL)
        .until(() -> "complete".equals(evaluate("document.readyState")));
  }

  /**
   * The value of the JavaScript {@code expression} in the page (awaited when it is a promise), as
   * Java sees JSON: {@code Map}, {@code List}, {@code String}, {@code Number}, {@code Boolean} or
   * {@code null}.
   *
   * @throws IllegalStateException with the script's error if the expression throws
   */
  public Object evaluate(String expression) {
    JsonNode result =
        call(
            "Runtime.evaluate",
            Map.of("expression", expression, "returnByValue", true, "awaitPromise", true));
    if (result.has("exceptionDetails")) {
      throw new IllegalStateException(
          "the page threw evaluating " + expression + ": " + result.get("exceptionDetails"));
    }
    JsonNode value = result.path("result").path("value");
    return value.isMissingNode() ? null : JsonMapper.shared().treeToValue(value, Object.class);
  }

  /** Saves a PNG of the whole page, however tall, to {@code file}. */
  public void screenshot(Path file) {
    Number width = (Number) evaluate("document.documentElement.scrollWidth");
    Number height = (Number) evaluate("document.documentElement.scrollHeight");
    JsonNode shot =
        call(
            "Page.captureScreenshot",
            Map.of(
                "format",
                "png",
                "captureBeyondViewport",
                true,
                "clip",
                Map.of("x", 0, "y", 0, "width", width, "height", height, "scale", 1)));
    try {
      Files.createDirectories(file.toAbsolutePath().getParent());
      Files.write(file, Base64.getDecoder().decode(shot.get("data").asString()));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + file, e);
    }
  }

  /** Errors the page's scripts threw and did not catch, as Chromium described them, so far. */
  public List<String> scriptErrors() {
    synchronized (scriptErrors) {
      return List.copyOf(scriptErrors);
    }
  }

  /** Closes the page's connection, ends Chromium and its helper processes, deletes the profile. */
  @Override
  public void close() {
    socket.abort();
    stop(process);
    deleteProfile(profile);
  }

  // ---------------------------------------------------------------- DevTools protocol

  private JsonNode call(String method, Map<String, Object> params) {
    int id = ids.incrementAndGet();
    CompletableFuture<JsonNode> answer = new CompletableFuture<>();
    answers.put(id, answer);
    ObjectNode message = JsonMapper.shared().createObjectNode();
    message.put("id", id);
    message.put("method", method);
    message.set("params", JsonMapper.shared().valueToTree(params));
    try {
      socket.sendText(message.toString(), true).get(ANSWER.toSeconds(), TimeUnit.SECONDS);
      JsonNode reply = answer.get(ANSWER.toSeconds(), TimeUnit.SECONDS);
      if (reply.has("error")) {
        throw new IllegalStateException(method + " failed: " + reply.get("error"));
      }
      return reply.path("result");
    } catch (ExecutionException e) {
      throw new IllegalStateException(method + " failed", e.getCause());
    } catch (TimeoutException e) {
      throw new IllegalStateException("Chromium did not answer " + method + " within " + ANSWER);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for " + method, e);
    } finally {
      answers.remove(id);
    }
  }

  private void received(String text) {
    JsonNode message = JsonMapper.shared().readTree(text);
    if (message.has("id")) {
      CompletableFuture<JsonNode> answer = answers.get(message.get("id").asInt());
      if (answer != null) {
        answer.complete(message);
      }
    } else if ("Runtime.exceptionThrown".equals(message.path("method").asString(""))) {
      JsonNode details = message.path("params").path("exceptionDetails");
      synchronized (scriptErrors) {
        scriptErrors.add(
            details.path("exception").path("description").asString(details.toString()));
      }
    }
  }

  private static HeadlessChromium connect(Process process, Path profile, URI page) {
    CompletableFuture<HeadlessChromium> browser = new CompletableFuture<>();
    WebSocket.Listener listener =
        new WebSocket.Listener() {
          private final StringBuilder partial = new StringBuilder();

          @Override
          public CompletionStage<?> onText(WebSocket socket, CharSequence data, boolean last) {
            partial.append(data);
            if (last) {
              String text = partial.toString();
              partial.setLength(0);
              browser.join().received(text);
            }
            socket.request(1);
            return null;
          }

          @Override
          public void onError(WebSocket socket, Throwable error) {
            HeadlessChromium connected = browser.getNow(null);
            if (connected != null) {
              connected.answers.values().forEach(a -> a.completeExceptionally(error));
            }
          }
        };
    try {
      WebSocket socket =
          HttpClient.newHttpClient()
              .newWebSocketBuilder()
              .connectTimeout(START)
              .buildAsync(page, listener)
              .get(START.toSeconds(), TimeUnit.SECONDS);
      HeadlessChromium connected = new HeadlessChromium(process, profile, socket);
      browser.complete(connected);
      return connected;
    } catch (ExecutionException | TimeoutException e) {
      throw new IllegalStateException("cannot connect to Chromium's page at " + page, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while connecting to Chromium", e);
    }
  }

  /**
   * The DevTools WebSocket of the browser's first page: Chromium writes its DevTools port to the
   * profile's {@code DevToolsActivePort} once it listens.
   */
  private static URI blankPage(Process process, Path profile, Path logFile) {
    Path portFile = profile.resolve("DevToolsActivePort");
    HttpClient http = HttpClient.newHttpClient();
    return await("Chromium's DevTools page (its log: " + logFile + ")")
        .atMost(START)
        .pollInterval(POLL)
        .failFast("Chromium exited at start; its log: " + logFile, () -> !process.isAlive())
        .until(() -> firstPage(http, portFile), Optional::isPresent)
        .orElseThrow();
  }

  /** The first page's WebSocket, once Chromium has written its port and answers on it. */
  private static Optional<URI> firstPage(HttpClient http, Path portFile) {
    try {
      List<String> lines =
          Files.exists(portFile) ? Files.readAllLines(portFile, StandardCharsets.UTF_8) : List.of();
      if (lines.isEmpty() || lines.get(0).isBlank()) {
        return Optional.empty();
      }
      int port = Integer.parseInt(lines.get(0).trim());
      HttpResponse<String> targets =
          http.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/json/list"))
                  .timeout(Duration.ofSeconds(5))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      if (targets.statusCode() != 200) {
        return Optional.empty();
      }
      for (JsonNode target : JsonMapper.shared().readTree(targets.body())) {
        if ("page".equals(target.path("type").asString("")) && target.has("webSocketDebuggerUrl")) {
          return Optional.of(URI.create(target.get("webSocketDebuggerUrl").asString()));
        }
      }
      return Optional.empty();
    } catch (IOException | NumberFormatException e) {
      return Optional.empty(); // still writing the file, or not answering yet: ask again
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while asking Chromium for its pages", e);
    }
  }

  // ---------------------------------------------------------------- the binary

  /**
   * Chromium as found on this machine.
   *
   * @param binary its executable, when one runs here
   * @param description its version, or why there is none
   */
  record Found(Optional<Path> binary, String description) {}

  private static Found find() {
    String configured = System.getProperty(BINARY_PROPERTY, "").trim();
    if (!configured.isEmpty()) {
      Path path = Path.of(configured);
      if (!Files.isExecutable(path)) {
        return new Found(
            Optional.empty(),
            "Chromium is not at " + configured + " (-Dchromium.binary): no executable file there");
      }
      return version(path);
    }
    String searchPath = System.getenv().getOrDefault("PATH", "");
    for (String name : NAMES) {
      for (String dir : searchPath.split(File.pathSeparator)) {
        Path candidate = Path.of(dir.isEmpty() ? "." : dir, name);
        if (Files.isExecutable(candidate)) {
          return version(candidate);
        }
      }
    }
    return new Found(
        Optional.empty(),
        "Chromium is not installed: neither "
            + String.join(" nor ", NAMES)
            + " is on the PATH (scripts/ensure-chromium.sh installs the pinned version; or"
            + " point the build at one with -Dchromium.binary=PATH)");
  }

  private static Found version(Path binary) {
    try {
      Process p =
          new ProcessBuilder(binary.toString(), "--version").redirectErrorStream(true).start();
      byte[] out = p.getInputStream().readAllBytes();
      if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
        p.destroyForcibly();
        return new Found(Optional.empty(), binary + " --version failed: " + text(out));
      }
      String version =
          text(out)
              .lines()
              .filter(line -> line.contains("Chromium") || line.contains("Chrome"))
              .findFirst()
              .orElse(text(out));
      return new Found(Optional.of(binary), version.trim() + " (" + binary + ")");
    } catch (IOException e) {
      return new Found(Optional.empty(), binary + " does not run: " + e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new Found(Optional.empty(), "interrupted while asking " + binary + " its version");
    }
  }

  private static String text(byte[] out) {
    return new String(out, StandardCharsets.UTF_8).trim();
  }

  // ---------------------------------------------------------------- ending

  private static void stop(Process process) {
    List<ProcessHandle> helpers = process.descendants().toList();
    process.destroy();
    helpers.forEach(ProcessHandle::destroy);
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    helpers.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
  }

  private static void deleteProfile(Path profile) {
    try (Stream<Path> files = Files.walk(profile)) {
      files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
    } catch (IOException e) {
      // A helper process may still be writing into it; the directory is under the temp dir.
    }
  }
}
