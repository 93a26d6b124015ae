package io.kvbridge.benchmarks.requestpath;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Closed-loop clients of a router's {@code /v1/completions}: each sends a completion, waits for the
 * answer, and sends the next at once. Every prompt is new (no prefix is shared, so no cache makes
 * one build's requests cheaper than the other's), between {@link #MIN_PROMPT} and {@link
 * #MAX_PROMPT} bytes (the sample model's tokens), each asking for {@link #MAX_TOKENS} tokens.
 */
final class LoadClients {

  static final int MIN_PROMPT = 128;
  static final int MAX_PROMPT = 512;
  static final int MAX_TOKENS = 16;

  private static final String[] WORDS = {
    "prefill", "decode", "lease", "block", "router", "tensor", "layer", "token", "cache", "read",
    "heads", "rank", "step", "pool", "model", "prompt"
  };

  private final HttpClient http =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(5))
          .build();
  private final URI completions;
  private final AtomicLong sequence = new AtomicLong();
  private final long seed;

  LoadClients(URI completions, long seed) {
    this.completions = completions;
    this.seed = seed;
  }

  /** What one window of load got: answers, failures by cause, and each answer's latency. */
  record Window(long answered, TreeMap<String, Long> failures, long[] latenciesNanos, long nanos) {

    double perSecond() {
      return answered * 1e9 / nanos;
    }

    long percentileNanos(double p) {
      if (latenciesNanos.length == 0) {
        return 0;
      }
      int i = (int) Math.ceil(p * latenciesNanos.length) - 1;
      return latenciesNanos[Math.max(0, Math.min(i, latenciesNanos.length - 1))];
    }
  }

  /** Runs {@code clients} clients for {@code length} and reports what they got. */
  Window run(int clients, Duration length) throws InterruptedException {
    long end = System.nanoTime() + length.toNanos();
    List<Client> all = new ArrayList<>();
    for (int i = 0; i < clients; i++) {
      all.add(new Client(end));
    }
    long start = System.nanoTime();
    all.forEach(Thread::start);
    for (Client c : all) {
      c.join();
    }
    long nanos = System.nanoTime() - start;
    long answered = 0;
    TreeMap<String, Long> failures = new TreeMap<>();
    int n = 0;
    for (Client c : all) {
      answered += c.answered;
      c.failures.forEach((k, v) -> failures.merge(k, v, Long::sum));
      n += c.latencies.size();
    }
    long[] latencies = new long[n];
    int k = 0;
    for (Client c : all) {
      for (long l : c.latencies) {
        latencies[k++] = l;
      }
    }
    Arrays.sort(latencies);
    return new Window(answered, failures, latencies, nanos);
  }

  /** The text the router answers for {@code prompt}, or a description of the failure. */
  String answer(String prompt) throws InterruptedException {
    try {
      HttpResponse<String> r = http.send(request(prompt), HttpResponse.BodyHandlers.ofString());
      if (r.statusCode() != 200) {
        return "HTTP " + r.statusCode();
      }
      return text(r.body());
    } catch (IOException e) {
      return e.getClass().getSimpleName();
    }
  }

  /** The {@code n}-th prompt of this load's seed. */
  String prompt(long n) {
    SplittableRandom random = new SplittableRandom(seed * 1_000_003 + n);
    int length = MIN_PROMPT + random.nextInt(MAX_PROMPT - MIN_PROMPT + 1);
    StringBuilder b = new StringBuilder(length + 16).append(n).append(':');
    while (b.length() < length) {
      b.append(' ').append(WORDS[random.nextInt(WORDS.length)]);
    }
    b.setLength(length);
    return b.toString();
  }

  private HttpRequest request(String prompt) {
    String body = "{\"prompt\":\"" + prompt + "\",\"max_tokens\":" + MAX_TOKENS + "}";
    return HttpRequest.newBuilder(completions)
        .timeout(Duration.ofSeconds(30))
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body))
        .build();
  }

  /** The first choice's text of a completion, as the JSON carries it (escapes kept). */
  static String text(String body) {
    int key = body.indexOf("\"text\":\"");
    if (key < 0) {
      return "no text in: " + body;
    }
    int from = key + 8;
    int to = from;
    while (to < body.length() && body.charAt(to) != '"') {
      to += body.charAt(to) == '\\' ? 2 : 1;
    }
    return body.substring(from, Math.min(to, body.length()));
  }

  private final class Client extends Thread {
    private final long end;
    private long answered;
    private final TreeMap<String, Long> failures = new TreeMap<>();
    private final List<Long> latencies = new ArrayList<>();

    Client(long end) {
      this.end = end;
      setDaemon(true);
    }

    @Override
    public void run() {
      while (System.nanoTime() < end) {
        HttpRequest request = request(prompt(sequence.getAndIncrement()));
        long start = System.nanoTime();
        try {
          HttpResponse<String> r = http.send(request, HttpResponse.BodyHandlers.ofString());
          if (r.statusCode() == 200 && r.body().contains("\"text\":\"")) {
            answered++;
            latencies.add(System.nanoTime() - start);
          } else {
            failures.merge("HTTP " + r.statusCode(), 1L, Long::sum);
          }
        } catch (IOException e) {
          failures.merge(e.getClass().getSimpleName(), 1L, Long::sum);
        } catch (InterruptedException e) {
          return;
        }
      }
    }
  }
}
