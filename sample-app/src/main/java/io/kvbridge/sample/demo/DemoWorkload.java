package io.kvbridge.sample.demo;

import io.kvbridge.sample.SampleProperties;
import io.kvbridge.sample.completions.CompletionRequest;
import io.kvbridge.sample.completions.CompletionResponse;
import io.kvbridge.sample.completions.ErrorResponse;
import io.kvbridge.sample.engine.Engine;
import io.kvbridge.sample.engine.EngineStats;
import io.kvbridge.sample.engine.Generation.KvSource;
import io.kvbridge.sample.engine.ToyModel;
import io.kvbridge.sample.router.DroppedAfterPrefillException;
import io.kvbridge.spi.ConsumerStatus;
import io.kvbridge.spi.ProducerStatus;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.MediaType;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestClientException;

/**
 * The demo: sends a workload of conversations through the router over HTTP, several at once, each
 * turn once the one before it is answered, while the router drops a share of requests after
 * prefill; checks every completion against the colocated reference; waits until the dropped
 * requests' leases are past their duration; and summarizes what kvbridge did, from the same
 * connector status the {@code kvbridge} actuator endpoint shows, and where the decode node's KV
 * came from (its prefix cache, the prefill node, itself); then compares the time to first token of
 * prompts streamed layer by layer and sent whole ({@link DemoTtft}).
 *
 * <p>Threads: {@link #run()} blocks its caller and uses its own pool for the requests.
 */
public final class DemoWorkload {

  private static final Logger LOG = LoggerFactory.getLogger(DemoWorkload.class);
  private static final int FAILURES_SHOWN = 5;

  private final SampleProperties.Demo settings;
  private final RestClient client;
  private final Supplier<URI> routerBase;
  private final Engine prefill;
  private final Engine decode;
  private final ToyModel reference;
  private final Duration leaseDuration;
  private final Duration sweepInterval;
  private final Duration prefillCost;
  private final DemoPrompts prompts;

  /**
   * A workload against the router at {@code routerBase}, whose nodes run {@code prefill} and {@code
   * decode} in this JVM.
   */
  public DemoWorkload(
      SampleProperties.Demo settings,
      RestClient client,
      Supplier<URI> routerBase,
      Engine prefill,
      Engine decode,
      Duration leaseDuration,
      Duration sweepInterval,
      Duration prefillCost) {
    this.settings = settings;
    this.prefillCost = prefillCost;
    this.client = client;
    this.routerBase = routerBase;
    this.prefill = prefill;
    this.decode = decode;
    this.reference = prefill.model();
    this.leaseDuration = leaseDuration;
    this.sweepInterval = sweepInterval;
    this.prompts =
        new DemoPrompts(
            settings.seed(),
            settings.maxPromptBytes(),
            Math.min(prefill.shape().tokensPerBlock(), decode.shape().tokensPerBlock()));
  }

  /** Runs the workload, waits for the dropped leases, and returns the summary. */
  public DemoSummary run() throws InterruptedException {
    int total = settings.requests();
    int turns = settings.turns();
    int conversations = (total + turns - 1) / turns;
    LOG.info(
        "demo: sending {} requests, {} conversations of up to {} turns, through the router at {}"
            + " ({} conversations at a time; {}); the router drops {}% of them after prefill"
            + " (kvbridge.sample.demo.drop-after-prefill)",
        total,
        conversations,
        turns,
        routerBase.get(),
        settings.concurrency(),
        engines(),
        Math.round(settings.dropAfterPrefill() * 100));
    Tally tally = new Tally();
    long started = System.nanoTime();
    ExecutorService pool = Executors.newFixedThreadPool(settings.concurrency(), demoThreads());
    try {
      List<Future<?>> futures = new ArrayList<>(conversations);
      for (int c = 0; c < conversations; c++) {
        int conversation = c;
        int first = c * turns;
        List<String> prompts = this.prompts.conversation(c, Math.min(turns, total - first));
        futures.add(
            pool.submit(
                () -> {
                  // One turn after another, as a user waits for each answer.
                  for (int t = 0; t < prompts.size(); t++) {
                    send(first + t, conversation, prompts.get(t), tally);
                  }
                }));
      }
      for (Future<?> f : futures) {
        try {
          f.get();
        } catch (ExecutionException e) {
          tally.failure("request crashed: " + e.getCause());
        }
      }
    } finally {
      pool.shutdownNow();
    }
    Duration elapsed = Duration.ofNanos(System.nanoTime() - started);
    awaitLeases(tally);
    // The workload's numbers, before the comparison's requests add theirs to the engines' counts.
    DemoSummary summary = summarize(tally, conversations, elapsed, Optional.empty());
    if (settings.ttftRequests() > 0) {
      LOG.info(
          "demo: time to first token of {}-token prompts, {} each way, streamed and whole",
          settings.ttftPromptTokens(),
          settings.ttftRequests());
      summary =
          summary.withTtft(
              new DemoTtft(
                      prefill,
                      decode,
                      settings.ttftRequests(),
                      settings.ttftPromptTokens(),
                      prefillCost)
                  .measure());
    }
    return summary;
  }

  /** The engines' shapes, for the log and the summary. */
  private String engines() {
    return String.format(
        Locale.ROOT,
        "prefill TP %d x %d-token blocks, decode TP %d x %d-token blocks, %s",
        prefill.shape().tpDegree(),
        prefill.shape().tokensPerBlock(),
        decode.shape().tpDegree(),
        decode.shape().tokensPerBlock(),
        decode.shape().model().order().name().toLowerCase(Locale.ROOT).replace('_', '-'));
  }

  private void send(int index, int conversation, String prompt, Tally tally) {
    int maxTokens = prompts.maxTokens(index, settings.maxTokens());
    String url = routerBase.get().toString().replaceAll("/+$", "") + "/v1/completions";
    try {
      Outcome outcome =
          client
              .post()
              .uri(url)
              .contentType(MediaType.APPLICATION_JSON)
              .body(CompletionRequest.of("kvbridge-toy", prompt, maxTokens))
              .exchange(
                  (req, response) -> {
                    if (response.getStatusCode().is2xxSuccessful()) {
                      return new Outcome(response.bodyTo(CompletionResponse.class), null);
                    }
                    return new Outcome(null, response.bodyTo(ErrorResponse.class));
                  });
      record(index, conversation, prompt, maxTokens, outcome, tally);
    } catch (RestClientException e) {
      tally.failure("request " + index + " (conversation " + conversation + "): " + e.getMessage());
    }
    int done = tally.done.incrementAndGet();
    if (done % settings.progressEvery() == 0 || done == settings.requests()) {
      LOG.info(
          "demo: {}/{} done: served {}, dropped {}, failed {}; prefill holds {} blocks in {} leases;"
              + " {} blocks moved, {} prompt tokens from the decode node's prefix cache",
          done,
          settings.requests(),
          tally.served.get(),
          tally.dropped.get(),
          tally.failed.get(),
          prefill.stats().heldBlocks(),
          prefill.connector().status().producer().orElseThrow().liveLeases(),
          decode.stats().loadedBlocks(),
          decode.stats().cachedTokens());
    }
  }

  private void record(
      int index, int conversation, String prompt, int maxTokens, Outcome outcome, Tally tally) {
    if (outcome.completion != null) {
      tally.served.incrementAndGet();
      CompletionResponse.KvInfo info = outcome.completion.kvbridge();
      String source = info == null ? "" : info.kvSource();
      if (KvSource.LOADED.name().equals(source)) {
        tally.fromTransfer.incrementAndGet();
      } else if (KvSource.RECOMPUTED.name().equals(source)) {
        tally.recomputed.incrementAndGet();
      } else if (KvSource.COMPUTED.name().equals(source)) {
        // The router sent it straight to the decode node, which computed what it did not hold.
        tally.alone.incrementAndGet();
      } else {
        // CACHED: the decode node's prefix cache held every token the prefill node leased.
        tally.local.incrementAndGet();
      }
      String expected = reference.referenceCompletion(prompt, maxTokens);
      if (!expected.equals(outcome.completion.text())) {
        tally.mismatches.incrementAndGet();
        LOG.error(
            "demo: request {} (conversation {}) differs from the reference: got '{}', expected"
                + " '{}'",
            index,
            conversation,
            outcome.completion.text(),
            expected);
      }
      return;
    }
    ErrorResponse.Detail error = outcome.error == null ? null : outcome.error.error();
    if (error != null && DroppedAfterPrefillException.TYPE.equals(error.type())) {
      tally.dropped.incrementAndGet();
      tally.lastDrop.set(System.nanoTime());
      return;
    }
    tally.failure(
        "request "
            + index
            + " (conversation "
            + conversation
            + "): "
            + (error == null ? "no error body" : error.code() + " " + error.message()));
  }

  /**
   * Waits until every dropped request's lease is past its duration and swept, then until the
   * prefill node holds nothing, at most one more lease duration.
   */
  private void awaitLeases(Tally tally) throws InterruptedException {
    if (tally.dropped.get() > 0) {
      long expiresBy = tally.lastDrop.get() + leaseDuration.toNanos() + 2 * sweepInterval.toNanos();
      long wait = expiresBy - System.nanoTime();
      LOG.info(
          "demo: waiting {} ms for the {} dropped requests' leases to expire"
              + " (kvbridge.lease.duration={} ms, sweep every {} ms)",
          Math.max(0, wait / 1_000_000),
          tally.dropped.get(),
          leaseDuration.toMillis(),
          sweepInterval.toMillis());
      if (wait > 0) {
        TimeUnit.NANOSECONDS.sleep(wait);
      }
    }
    long deadline = System.nanoTime() + leaseDuration.toNanos() + Duration.ofSeconds(5).toNanos();
    while (System.nanoTime() < deadline
        && (prefill.stats().heldBlocks() > 0
            || prefill.connector().status().producer().orElseThrow().liveLeases() > 0
            || decode.stats().heldBlocks() > 0)) {
      TimeUnit.MILLISECONDS.sleep(50);
    }
  }

  private DemoSummary summarize(
      Tally tally, int conversations, Duration elapsed, Optional<DemoTtft.Comparison> ttft) {
    ProducerStatus producer = prefill.connector().status().producer().orElseThrow();
    ConsumerStatus consumer = decode.connector().status().consumer().orElseThrow();
    EngineStats d = decode.stats();
    return new DemoSummary(
        engines(),
        settings.requests(),
        conversations,
        tally.served.get(),
        tally.dropped.get(),
        tally.failed.get(),
        tally.failures,
        tally.fromTransfer.get(),
        tally.local.get(),
        tally.alone.get(),
        tally.recomputed.get(),
        d.cachedTokens(),
        d.loadedTokens(),
        d.computedTokens(),
        prefill.stats().cachedTokens(),
        d.loadedBlocks(),
        consumer.bytesRead(),
        producer.leasesGranted(),
        producer.leasesEnded(),
        producer.liveLeases(),
        prefill.stats().heldBlocks(),
        decode.stats().heldBlocks(),
        tally.mismatches.get(),
        elapsed,
        ttft);
  }

  private static ThreadFactory demoThreads() {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, "demo-client-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }

  /** One request's answer: a completion or an error body. */
  private record Outcome(CompletionResponse completion, ErrorResponse error) {}

  /** Counts shared by the request threads. */
  private static final class Tally {
    final AtomicInteger done = new AtomicInteger();
    final AtomicInteger served = new AtomicInteger();
    final AtomicInteger dropped = new AtomicInteger();
    final AtomicInteger failed = new AtomicInteger();
    final AtomicInteger fromTransfer = new AtomicInteger();
    final AtomicInteger local = new AtomicInteger();
    final AtomicInteger alone = new AtomicInteger();
    final AtomicInteger recomputed = new AtomicInteger();
    final AtomicInteger mismatches = new AtomicInteger();
    final AtomicLong lastDrop = new AtomicLong();
    final List<String> failures = Collections.synchronizedList(new ArrayList<>());

    void failure(String reason) {
      failed.incrementAndGet();
      LOG.warn("demo: {}", reason);
      if (failures.size() < FAILURES_SHOWN) {
        failures.add(reason);
      }
    }
  }
}
