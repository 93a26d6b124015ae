package io.kvbridge.sample.demo;

import io.kvbridge.sample.engine.Engine;
import io.kvbridge.sample.engine.EngineRequest;
import io.kvbridge.sample.engine.Generation;
import io.kvbridge.sample.engine.ToyModel;
import io.kvbridge.spi.TransferParams;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The demo's time to first token both ways: prompts of one length (at most what both engines' pools
 * and contexts take) sent one at a time from the prefill engine to the decode engine, alternately
 * streamed (the lease granted as the prefill starts, each layer read while the next ones compute)
 * and whole (the lease granted once the prefill is done, then read); the time from the prefill's
 * start to the decode engine's first token. Each prompt is new to both engines' prefix caches, and
 * each output is checked against the colocated reference.
 *
 * <p>Threads: {@link #measure()} blocks its caller.
 */
public final class DemoTtft {

  private static final Duration PATIENCE = Duration.ofSeconds(30);

  private final Engine prefill;
  private final Engine decode;
  private final ToyModel reference;
  private final int requests;
  private final int promptTokens;
  private final Duration prefillCost;

  DemoTtft(Engine prefill, Engine decode, int requests, int promptTokens, Duration prefillCost) {
    this.prefill = prefill;
    this.decode = decode;
    this.reference = prefill.model();
    this.requests = requests;
    this.promptTokens = Math.min(promptTokens, fitting(prefill, decode));
    this.prefillCost = prefillCost;
  }

  /**
   * The longest prompt both engines take while half their pools are held (their prefix caches keep
   * the rest) and the context leaves room for the one token generated.
   */
  private static int fitting(Engine prefill, Engine decode) {
    int pool =
        Math.min(
            prefill.shape().blockCount() * prefill.shape().tokensPerBlock(),
            decode.shape().blockCount() * decode.shape().tokensPerBlock());
    int context = Math.min(prefill.context().tokens(), decode.context().tokens()) - 1;
    return Math.max(1, Math.min(pool / 2, context));
  }

  /** Sends the prompts both ways, one at a time; what it measured. */
  Comparison measure() throws InterruptedException {
    List<Long> streamed = new ArrayList<>();
    List<Long> whole = new ArrayList<>();
    int mismatches = 0;
    int notStreamed = 0;
    for (int i = 0; i < 2 * requests; i++) {
      boolean stream = i % 2 == 0;
      String prompt = prompt(i);
      Run run = stream ? streamed(i, prompt) : whole(i, prompt);
      (stream ? streamed : whole).add(run.nanos());
      if (stream && !run.streamed()) {
        notStreamed++;
      }
      if (!reference.referenceCompletion(prompt, 1).equals(run.text())) {
        mismatches++;
      }
    }
    return new Comparison(
        promptTokens,
        requests,
        prefillCost,
        median(streamed),
        median(whole),
        notStreamed,
        mismatches);
  }

  /** A prompt of {@code promptTokens} UTF-8 bytes that neither engine has seen. */
  private String prompt(int i) {
    StringBuilder text = new StringBuilder("ttft " + i + " " + System.nanoTime() + ": ");
    while (text.length() < promptTokens) {
      text.append("the cache block moves from prefill to decode ");
    }
    return text.substring(0, promptTokens);
  }

  private Run streamed(int i, String prompt) throws InterruptedException {
    long started = System.nanoTime();
    CompletableFuture<TransferParams> leased = new CompletableFuture<>();
    CompletableFuture<Generation> prefilled =
        prefill.submit(
            new EngineRequest("ttft-p-" + i, prompt, 1, true, Optional.empty()), leased::complete);
    CompletableFuture.anyOf(leased, prefilled).join();
    boolean early = leased.isDone();
    TransferParams params = early ? leased.join() : await(prefilled).transferParams().orElseThrow();
    Generation decoded = decodeFrom(i, prompt, params);
    long nanos = System.nanoTime() - started;
    await(prefilled);
    return new Run(nanos, decoded.text(), early);
  }

  private Run whole(int i, String prompt) throws InterruptedException {
    long started = System.nanoTime();
    Generation prefilled =
        await(prefill.submit(new EngineRequest("ttft-p-" + i, prompt, 1, true, Optional.empty())));
    Generation decoded = decodeFrom(i, prompt, prefilled.transferParams().orElseThrow());
    return new Run(System.nanoTime() - started, decoded.text(), false);
  }

  private Generation decodeFrom(int i, String prompt, TransferParams params)
      throws InterruptedException {
    return await(
        decode.submit(new EngineRequest("ttft-d-" + i, prompt, 1, false, Optional.of(params))));
  }

  private static Generation await(CompletableFuture<Generation> future)
      throws InterruptedException {
    try {
      return future.get(PATIENCE.toNanos(), TimeUnit.NANOSECONDS);
    } catch (ExecutionException e) {
      throw new IllegalStateException("a time-to-first-token request failed: " + e.getCause(), e);
    } catch (TimeoutException e) {
      throw new IllegalStateException("a time-to-first-token request took over " + PATIENCE, e);
    }
  }

  private static long median(List<Long> nanos) {
    long[] sorted = nanos.stream().mapToLong(Long::longValue).sorted().toArray();
    return sorted.length == 0 ? 0 : sorted[(sorted.length - 1) / 2];
  }

  /** One request: its time to first token, its output, whether it was streamed. */
  private record Run(long nanos, String text, boolean streamed) {}

  /**
   * What the comparison measured.
   *
   * @param promptTokens each prompt's tokens
   * @param requests prompts sent each way
   * @param prefillCost the engines' prefill cost per layer and token
   * @param streamedNanos the median time to first token, streamed
   * @param wholeNanos the median time to first token, whole
   * @param notStreamed prompts sent to be streamed that the connector leased whole (shorter than
   *     {@code kvbridge.streaming.min-tokens})
   * @param mismatches outputs that differ from the colocated reference
   */
  public record Comparison(
      int promptTokens,
      int requests,
      Duration prefillCost,
      long streamedNanos,
      long wholeNanos,
      int notStreamed,
      int mismatches) {

    /** The summary's lines. */
    public List<String> lines() {
      return Arrays.asList(
          String.format(
              Locale.ROOT,
              "time to first token          %d-token prompts, %d each way, one at a time, after"
                  + " the numbers above (prefill cost %s per layer and token)",
              promptTokens,
              requests,
              prefillCost.isZero() ? "0s" : prefillCost.toNanos() / 1000 + "us"),
          String.format(
              Locale.ROOT,
              "  streamed layer by layer    p50 %.2f ms%s",
              streamedNanos / 1e6,
              notStreamed == 0
                  ? ""
                  : " (" + notStreamed + " leased whole: below kvbridge.streaming.min-tokens)"),
          String.format(
              Locale.ROOT,
              "  whole request              p50 %.2f ms (streamed / whole %.2f)",
              wholeNanos / 1e6,
              wholeNanos == 0 ? 0.0 : (double) streamedNanos / wholeNanos));
    }
  }
}
