package io.kvbridge.sample.demo;

import io.kvbridge.lease.EndReason;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The outcome of a demo run, with the checks that prove kvbridge did its job.
 *
 * @param requests requests sent to the router
 * @param served requests answered with a completion
 * @param dropped requests the router dropped after prefill (fault injection)
 * @param failed requests answered with any other error (should be 0)
 * @param failures the first few failure reasons
 * @param servedFromTransfer served requests whose prompt KV was loaded from the prefill node
 * @param servedLocally served requests with no full block to transfer (computed on the decode node)
 * @param recomputed served requests whose load failed and were prefilled on the decode node
 * @param blocksMoved blocks the decode node loaded and the prefill node validated
 * @param tokensMoved prompt tokens those blocks held
 * @param bytesMoved bytes of those reads, as the decode node's connector counts them
 * @param leasesGranted leases the prefill node granted
 * @param leasesEnded leases ended, by reason, as the prefill node's connector counts them
 * @param liveLeases leases still live on the prefill node
 * @param blocksHeldOnPrefill blocks the prefill engine still holds
 * @param blocksHeldOnDecode blocks the decode engine still holds
 * @param mismatches completions that differ from the colocated reference
 * @param elapsed how long the workload took, without the wait for expiry
 */
public record DemoSummary(
    int requests,
    int served,
    int dropped,
    int failed,
    List<String> failures,
    int servedFromTransfer,
    int servedLocally,
    int recomputed,
    long blocksMoved,
    long tokensMoved,
    long bytesMoved,
    long leasesGranted,
    Map<EndReason, Long> leasesEnded,
    int liveLeases,
    int blocksHeldOnPrefill,
    int blocksHeldOnDecode,
    int mismatches,
    Duration elapsed) {

  /** Copies the collections and fills in every end reason. */
  public DemoSummary {
    failures = List.copyOf(failures);
    Map<EndReason, Long> all = new EnumMap<>(EndReason.class);
    for (EndReason reason : EndReason.values()) {
      all.put(reason, leasesEnded.getOrDefault(reason, 0L));
    }
    leasesEnded = Map.copyOf(all);
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
    checks.put("no request failed", failed == 0);
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
    lines.add(
        String.format(
            Locale.ROOT,
            "requests                     %d in %.1f s",
            requests,
            elapsed.toMillis() / 1000.0));
    lines.add(
        String.format(
            Locale.ROOT,
            "  served                     %d (KV transferred %d, no full block %d, recomputed %d)",
            served,
            servedFromTransfer,
            servedLocally,
            recomputed));
    lines.add(
        String.format(Locale.ROOT, "  dropped by the router      %d (fault injection)", dropped));
    lines.add(String.format(Locale.ROOT, "  failed                     %d", failed));
    failures.forEach(f -> lines.add("    " + f));
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
            "leases granted               %d, ended READ %d, EXPIRED %d, REVOKED %d, live %d",
            leasesGranted,
            ended(EndReason.READ),
            ended(EndReason.EXPIRED),
            ended(EndReason.REVOKED),
            liveLeases));
    lines.add(
        String.format(
            Locale.ROOT,
            "blocks still held            prefill %d, decode %d",
            blocksHeldOnPrefill,
            blocksHeldOnDecode));
    lines.add(
        String.format(Locale.ROOT, "outputs != reference         %d of %d", mismatches, served));
    checks().forEach((name, ok) -> lines.add((ok ? "  [ok]     " : "  [FAILED] ") + name));
    lines.add(passed() ? "all checks passed" : "SOME CHECKS FAILED");
    lines.add("===============================================================");
    return String.join(System.lineSeparator(), lines);
  }

  /** The summary as JSON-ready values, for the info endpoint. */
  public Map<String, Object> toMap() {
    Map<String, Object> map = new LinkedHashMap<>();
    map.put("requests", requests);
    map.put("served", served);
    map.put("dropped", dropped);
    map.put("failed", failed);
    map.put("servedFromTransfer", servedFromTransfer);
    map.put("servedLocally", servedLocally);
    map.put("recomputed", recomputed);
    map.put("blocksMoved", blocksMoved);
    map.put("tokensMoved", tokensMoved);
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
