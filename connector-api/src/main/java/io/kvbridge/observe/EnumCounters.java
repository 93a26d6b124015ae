package io.kvbridge.observe;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * One counter per constant of an enum, e.g. refusals by kind or leases ended by reason.
 *
 * <p>Threads: {@link #increment} and {@link #snapshot} may be called from any thread at any time;
 * increments are cheap under contention.
 */
public final class EnumCounters<E extends Enum<E>> {

  private final Class<E> type;
  private final Map<E, LongAdder> counts;

  /** Counters for every constant of {@code type}, all zero. */
  public EnumCounters(Class<E> type) {
    this.type = type;
    this.counts = new EnumMap<>(type);
    for (E key : type.getEnumConstants()) {
      counts.put(key, new LongAdder());
    }
  }

  /** Adds one to {@code key}'s count. */
  public void increment(E key) {
    counts.get(key).increment();
  }

  /** The counts now, one entry per constant, in declaration order. */
  public Map<E, Long> snapshot() {
    Map<E, Long> out = new EnumMap<>(type);
    counts.forEach((k, v) -> out.put(k, v.sum()));
    return out;
  }
}
