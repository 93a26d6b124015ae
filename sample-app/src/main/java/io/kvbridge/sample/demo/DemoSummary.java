package io.kvbridge.sample.demo;

import io.kvbridge.lease.EndReason;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The outcome of a demo run, with the checks that prove kvbridge did its job.
 *
 * @param engines the two engines' shapes, as the summary prints them
 * @param requests requests sent to the router
 * @param conversations the conversations they formed
 * @param served requests answered with a completion
 * @param dropped requests the router dropped after prefill (fault injection)
 * @param failed requests answered with any other error (should be 0)
 * @param failures the first few failure reasons
 * @param servedFromTransfer served requests for which the decode node loaded at least one token's
 *     KV from the prefill node
 * @param servedLocally served requests with nothing to load: the decode node's prefix cache held
 *     every token the prefill node leased, so the lease was released unread
 * @param servedAlone served requests the router sent straight to the decode node, whose prefix
 *     cache held enough of the prompt ({@code kvbridge.sample.router.decode-alone-share}): it
 *     computed the rest, and no prefill node was called
 * @param recomputed served requests whose load failed and were computed on the decode node
 * @param tokensFromCache prompt tokens the decode node copied from its prefix cache
 * @param tokensMoved prompt tokens the decode node loaded from the prefill node
 * @param tokensComputed prompt tokens the decode node computed itself
 * @param prefillTokensFromCache prompt tokens the prefill node copied from its own prefix cache
 * @param blocksMoved decode blocks the loads wrote, validated by the prefill node
 * @param bytesMoved bytes of those reads, as the decode node's connector counts them
 * @param leasesGranted leases the prefill node granted
 * @param leasesEnded leases ended, by reason, as the prefill node's connector counts them
 * @param liveLeases leases still live on the prefill node
 * @param blocksHeldOnPrefill blocks requests still hold on the prefill engine
 * @param blocksHeldOnDecode blocks requests still hold on the decode engine
 * @param mismatches completions that differ from the colocated reference
 * @param elapsed how long the workload took, without the wait for expiry
 * @param ttft the time to first token of prompts streamed layer by layer and sent whole, when the
 *     demo compared them
 */
public record DemoSummary(
    String engines,
    int requests,
    int conversations,
    int served,
    int dropped,
    int failed,
    List<String> failures,
    int servedFromTransfer,
    int servedLocally,
    int servedAlone,
    int recomputed,
    long tokensFromCache,
    long tokensMoved,
    long tokensComputed,
    long prefillTokensFromCache,
    long blocksMoved,
    long bytesMoved,
    long leasesGranted,
    Map<EndReason, Long> leasesEnded,
    int liveLeases,
    int blocksHeldOnPrefill,
    int blocksHeldOnDecode,
    int mismatches,
    Duration elapsed,
    Optional<DemoTtft.Comparison> ttft) {

  /** Copies the collections and fills in every end reason. */
  public DemoSummary {
    failures = List.copyOf(failures);
    Map<EndReason, Long> all = new EnumMap<>(EndReason.class);
    for (EndReason reason : EndReason.values()) {
      all.put(reason, leasesEnded.getOrDefault(reason, 0L));
    }
    leasesEnded = Map.copyOf(all);
  }

  /** This summary with the time-to-first-token comparison run after the workload. */
  public DemoSummary withTtft(DemoTtft.Comparison comparison) {
    return new DemoSummary(
        engines,
        requests,
        conversations,
        served,
        dropped,
        failed,
        failures,
        servedFromTransfer,
        servedLocally,
        servedAlone,
        recomputed,
        tokensFromCache,
        tokensMoved,
        tokensComputed,
        prefillTokensFromCache,
        blocksMoved,
        bytesMoved,
        leasesGranted,
        leasesEnded,
        liveLeases,
        blocksHeldOnPrefill,
        blocksHeldOnDecode,
        mismatches,
        elapsed,
        Optional.of(comparison));
  }

  /** Leases that ended for {@code reason}. */
  public long ended(EndReason reason) {
    return leasesEnded.getOrDefault(reason, 0L);
  }

  /** Each check by name: whether it passed. */
  public Map<String, Boolean> checks() {
    Map<String, Boolean> checks = new LinkedHashMap<>();
    checks.put("no blocks held on the prefill node", blocksHeldOnPrefill == 0 && liveLeases == 0);
    checks.put("no outputs differ from the colocated reference", mismatches == 0);
    checks.put("every dropped request's lease expired", ended(EndReason.EXPIRED) == dropped);
    checks.put(
        "every transferred request's lease ended READ",
        ended(EndReason.READ) == servedFromTransfer);
    checks.put(
        "every lease held whole in the decode node's prefix cache was RELEASED",
        ended(EndReason.RELEASED) == servedLocally);
    checks.put(
        "a lease was granted for every request but those the decode node served alone",
        // A failed request may have failed before or after its lease: the check below names it.
        failed > 0 || leasesGranted == (long) served + dropped - servedAlone);
    checks.put("no request failed", failed == 0);
    ttft.ifPresent(
        t ->
            checks.put(
                "no time-to-first-token output differs from the colocated reference",
                t.mismatches() == 0));
    return checks;
  }

  /** Whether every check passed. */
  public boolean passed() {
    return checks().values().stream().allMatch(Boolean::booleanValue);
  }

  /** The summary as the demo prints it. */
  public String format() {
    List<String> lines = new ArrayList<>();
    lines.add("==================== kvbridge demo summary ====================");
    lines.add("engines                      " + engines);
    lines.add(
        String.format(
            Locale.ROOT,
            "requests                     %d in %.1f s (%d conversations)",
            requests,
            elapsed.toMillis() / 1000.0,
            conversations));
    lines.add(
        String.format(
            Locale.ROOT,
            "  served                     %d (KV transferred %d, all in D's prefix cache %d, by D"
                + " alone %d, recomputed %d)",
            served,
            servedFromTransfer,
            servedLocally,
            servedAlone,
            recomputed));
    lines.add(
        String.format(Locale.ROOT, "  dropped by the router      %d (fault injection)", dropped));
    lines.add(String.format(Locale.ROOT, "  failed                     %d", failed));
    failures.forEach(f -> lines.add("    " + f));
    lines.add(
        String.format(
            Locale.ROOT,
            "prompt tokens on D           %d: from its prefix cache %d, loaded %d, computed %d",
            tokensFromCache + tokensMoved + tokensComputed,
            tokensFromCache,
            tokensMoved,
            tokensComputed));
    lines.add(
        String.format(
            Locale.ROOT,
            "blocks moved P -> D          %d (%d tokens, %s)",
            blocksMoved,
            tokensMoved,
            bytes(bytesMoved)));
    lines.add(
        String.format(
            Locale.ROOT,
            "P's prefix cache             %d prompt tokens not computed again",
            prefillTokensFromCache));
    lines.add(
        String.format(
            Locale.ROOT,
            "leases granted               %d, ended READ %d, RELEASED %d, EXPIRED %d, REVOKED %d,"
                + " live %d",
            leasesGranted,
            ended(EndReason.READ),
            ended(EndReason.RELEASED),
            ended(EndReason.EXPIRED),
            ended(EndReason.REVOKED),
            liveLeases));
    lines.add(
        String.format(
            Locale.ROOT,
            "blocks still held            prefill %d, decode %d (prefix caches aside)",
            blocksHeldOnPrefill,
            blocksHeldOnDecode));
    lines.add(
        String.format(Locale.ROOT, "outputs != reference         %d of %d", mismatches, served));
    ttft.ifPresent(t -> lines.addAll(t.lines()));
    checks().forEach((name, ok) -> lines.add((ok ? "  [ok]     " : "  [FAILED] ") + name));
    lines.add(passed() ? "all checks passed" : "SOME CHECKS FAILED");
    lines.add("===============================================================");
    return String.join(System.lineSeparator(), lines);
  }

  /** The summary as JSON-ready values, for the info endpoint. */
  public Map<String, Object> toMap() {
    Map<String, Object> map = new LinkedHashMap<>();
    map.put("engines", engines);
    map.put("requests", requests);
    map.put("conversations", conversations);
    map.put("served", served);
    map.put("dropped", dropped);
    map.put("failed", failed);
    map.put("servedFromTransfer", servedFromTransfer);
    map.put("servedLocally", servedLocally);
    map.put("servedAlone", servedAlone);
    map.put("recomputed", recomputed);
    map.put("tokensFromCache", tokensFromCache);
    map.put("tokensMoved", tokensMoved);
    map.put("tokensComputed", tokensComputed);
    map.put("prefillTokensFromCache", prefillTokensFromCache);
    map.put("blocksMoved", blocksMoved);
    map.put("bytesMoved", bytesMoved);
    map.put("leasesGranted", leasesGranted);
    Map<String, Long> ended = new LinkedHashMap<>();
    for (EndReason reason : EndReason.values()) {
      ended.put(reason.name(), ended(reason));
    }
    map.put("leasesEnded", ended);
    map.put("liveLeases", liveLeases);
    map.put("blocksHeldOnPrefill", blocksHeldOnPrefill);
    map.put("blocksHeldOnDecode", blocksHeldOnDecode);
    map.put("mismatches", mismatches);
    ttft.ifPresent(
        t -> {
          Map<String, Object> both = new LinkedHashMap<>();
          both.put("promptTokens", t.promptTokens());
          both.put("requests", t.requests());
          both.put("streamedP50Millis", t.streamedNanos() / 1e6);
          both.put("wholeP50Millis", t.wholeNanos() / 1e6);
          both.put("notStreamed", t.notStreamed());
          both.put("mismatches", t.mismatches());
          map.put("timeToFirstToken", both);
        });
    map.put("passed", passed());
    return map;
  }

  private static String bytes(long n) {
    if (n < 1024) {
      return n + " B";
    }
    if (n < 1024 * 1024) {
      return String.format(Locale.ROOT, "%.1f KiB", n / 1024.0);
    }
    return String.format(Locale.ROOT, "%.2f MiB", n / (1024.0 * 1024.0));
  }
}
