package io.kvbridge.sample.dashboard;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What the dashboard must show for one read of the {@code kvbridge} endpoint, keyed as {@link
 * DashboardPage.Reading#values} keys it: written out independently of the page's script, from the
 * endpoint's JSON.
 */
final class EndpointView {

  private static final String NONE = "\u2013";

  private final Map<String, Object> json;

  EndpointView(Map<String, Object> json) {
    this.json = json;
  }

  /**
   * Every count that only grows, by key: leases granted and ended, dropped handshake connections,
   * reads, failed loads, refused inputs; and, when the endpoint has a prefix index, what became of
   * the events offered to it.
   */
  Map<String, Long> counters() {
    Map<String, Long> counters = new LinkedHashMap<>();
    long failed = 0;
    long rejected = 0;
    for (Map<String, Object> c : connectors()) {
      String engine = (String) c.get("engineId");
      Map<String, Object> producer = part(c, "producer");
      if (producer != null) {
        counters.put(engine + "/leasesGranted", number(producer.get("leasesGranted")));
        counts(producer, "leasesEnded")
            .forEach((reason, n) -> counters.put(engine + "/leasesEnded." + reason, n));
        counts(producer, "droppedConnections")
            .forEach((reason, n) -> counters.put(engine + "/droppedConnections." + reason, n));
      }
      Map<String, Object> consumer = part(c, "consumer");
      if (consumer != null) {
        for (String name : List.of("readsCompleted", "bytesRead", "loadsFailed")) {
          counters.put(engine + "/" + name, number(consumer.get(name)));
        }
        failed += number(consumer.get("loadsFailed"));
      }
      for (Map.Entry<String, Long> kind : counts(c, "rejected").entrySet()) {
        counters.put(engine + "/rejected." + kind.getKey(), kind.getValue());
        rejected += kind.getValue();
      }
    }
    counters.put("total.loadsFailed", failed);
    counters.put("total.rejected", rejected);
    Map<String, Object> index = prefixIndex();
    if (index != null) {
      Map<String, Long> offered = counts(index, "offered");
      long refused = number(index.get("refused"));
      for (String outcome :
          List.of("UNKNOWN_ENGINE", "WRONG_INCARNATION", "NOT_SYNCED", "WRONG_MODEL")) {
        refused += offered.get(outcome);
      }
      counters.put("prefixIndex.applied", offered.get("APPLIED"));
      counters.put("prefixIndex.repeated", offered.get("REPEATED"));
      counters.put("prefixIndex.lost", offered.get("GAP"));
      counters.put("prefixIndex.refused", refused);
      for (String name : List.of("unauthenticated", "unreachable", "resyncs")) {
        counters.put("prefixIndex." + name, number(index.get(name)));
      }
    }
    return counters;
  }

  /**
   * The text of every value the page shows when the endpoint is {@linkplain #quiet quiet} and the
   * page's last two reads of it saw the same, but the peers' clock estimates, which {@link #clocks}
   * gives.
   */
  Map<String, String> shownWhenQuiet() {
    Map<String, String> shown = new LinkedHashMap<>();
    counters().forEach((key, n) -> shown.put(key, count(n)));
    long live = 0;
    long inFlight = 0;
    for (Map<String, Object> c : connectors()) {
      String engine = (String) c.get("engineId");
      Map<String, Object> producer = part(c, "producer");
      if (producer != null) {
        live += number(producer.get("liveLeases"));
        shown.put(engine + "/liveLeases", count(number(producer.get("liveLeases"))));
        shown.put(engine + "/soonestExpiry", NONE); // no live lease, no expiry
        @SuppressWarnings("unchecked")
        List<String> consumers = (List<String>) producer.get("consumers");
        shown.put(engine + "/consumers", consumers.isEmpty() ? NONE : String.join(", ", consumers));
      }
      Map<String, Object> consumer = part(c, "consumer");
      if (consumer != null) {
        inFlight += number(consumer.get("loadsInFlight"));
        shown.put(engine + "/loadsInFlight", count(number(consumer.get("loadsInFlight"))));
        shown.put(engine + "/transfersPerSecond", "0.0");
        shown.put(engine + "/bandwidth", "0 B/s");
        for (Map<String, Object> peer : peers(consumer)) {
          String where = engine + "/" + peer.get("engineId") + "/";
          shown.put(where + "incarnation", String.valueOf(peer.get("incarnation")));
          shown.put(where + "address", (String) peer.get("address"));
        }
      }
    }
    shown.put("total.liveLeases", count(live));
    shown.put("total.loadsInFlight", count(inFlight));
    shown.put("total.transfersPerSecond", "0.0");
    shown.put("total.bandwidth", "0 B/s");
    Map<String, Object> index = prefixIndex();
    if (index != null) {
      shown.put("prefixIndex.blocks", count(number(index.get("blocks"))));
      shown.put("prefixIndex.engines", count(number(index.get("engines"))));
      long requests = number(index.get("requests"));
      long cacheRouted = number(index.get("cacheRouted"));
      shown.put("prefixIndex.hitRate", requests == 0 ? NONE : percent(cacheRouted, requests));
      shown.put(
          "prefixIndex.requests",
          requests == 0
              ? "no request yet"
              : count(cacheRouted) + " of " + count(requests) + " requests");
      shown.put("prefixIndex.hitRateRecent", NONE);
      shown.put("prefixIndex.requestsRecent", "no new request");
    }
    return shown;
  }

  /** Each peer's clock offset and its uncertainty, in nanoseconds, by key. */
  Map<String, Long> clocks() {
    Map<String, Long> clocks = new LinkedHashMap<>();
    for (Map<String, Object> c : connectors()) {
      Map<String, Object> consumer = part(c, "consumer");
      if (consumer == null) {
        continue;
      }
      for (Map<String, Object> peer : peers(consumer)) {
        String where = c.get("engineId") + "/" + peer.get("engineId") + "/";
        clocks.put(where + "clockOffset", number(peer.get("clockOffsetNanos")));
        clocks.put(where + "clockUncertainty", number(peer.get("clockUncertaintyNanos")));
      }
    }
    return clocks;
  }

  /** Whether nothing is under way: no live lease, no load in flight. */
  boolean quiet() {
    for (Map<String, Object> c : connectors()) {
      Map<String, Object> producer = part(c, "producer");
      Map<String, Object> consumer = part(c, "consumer");
      if ((producer != null && number(producer.get("liveLeases")) != 0)
          || (consumer != null && number(consumer.get("loadsInFlight")) != 0)) {
        return false;
      }
    }
    return true;
  }

  /** The count under {@code key}, as {@link #counters} keys it. */
  long counter(String key) {
    Long n = counters().get(key);
    if (n == null) {
      throw new AssertionError("the endpoint has no " + key + ": " + json);
    }
    return n;
  }

  /** The endpoint's prefix index, or null when the application has none. */
  @SuppressWarnings("unchecked")
  private Map<String, Object> prefixIndex() {
    return (Map<String, Object>) json.get("prefixIndex");
  }

  @SuppressWarnings("unchecked")
  private List<Map<String, Object>> connectors() {
    return (List<Map<String, Object>>) json.get("connectors");
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> part(Map<String, Object> connector, String name) {
    return (Map<String, Object>) connector.get(name);
  }

  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> peers(Map<String, Object> consumer) {
    return (List<Map<String, Object>>) consumer.get("producers");
  }

  private static Map<String, Long> counts(Map<String, Object> object, String name) {
    Map<String, Long> counts = new LinkedHashMap<>();
    @SuppressWarnings("unchecked")
    Map<String, Object> raw = (Map<String, Object>) object.get(name);
    raw.forEach((key, n) -> counts.put(key, number(n)));
    return counts;
  }

  private static long number(Object value) {
    return ((Number) value).longValue();
  }

  /** A count as the page writes it: digits grouped by thousands with commas. */
  static String count(long n) {
    return String.format(Locale.US, "%,d", n);
  }

  /**
   * {@code part / whole} as the page writes a share: a percentage with one decimal, the double the
   * page computes rounded half up, e.g. {@code 66.7%}.
   */
  static String percent(long part, long whole) {
    BigDecimal share = new BigDecimal(100.0 * part / whole).setScale(1, RoundingMode.HALF_UP);
    return String.format(Locale.US, "%,.1f%%", share);
  }
}
