package io.kvbridge.runtime.consumer;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The consumer's loads that have not ended, by the consumer's request id and by the lease they read
 * (replies from producers name the lease), with a count per producer for its limit. Every index
 * changes in {@link #add} and {@link #remove} only.
 *
 * <p>Threads: confined to the connector's lock.
 */
final class LoadTable {

  private final Map<String, Load> byRequest = new LinkedHashMap<>();
  private final Map<Load.LeaseKey, Load> byLease = new HashMap<>();
  private final Map<String, Integer> perProducer = new HashMap<>();

  /** Adds a load; its request id and its lease must both be new. */
  void add(Load load) {
    if (byRequest.containsKey(load.requestId()) || byLease.containsKey(load.key())) {
      throw new IllegalStateException(
          "load " + load.requestId() + " or its lease is already known");
    }
    byRequest.put(load.requestId(), load);
    byLease.put(load.key(), load);
    perProducer.merge(load.key().producerEngineId(), 1, Integer::sum);
  }

  /** Removes a load from every index; nothing if it is not here. */
  void remove(Load load) {
    if (byRequest.remove(load.requestId(), load)) {
      byLease.remove(load.key());
      perProducer.computeIfPresent(load.key().producerEngineId(), (k, n) -> n == 1 ? null : n - 1);
    }
  }

  Optional<Load> get(String requestId) {
    return Optional.ofNullable(byRequest.get(requestId));
  }

  Optional<Load> byLease(Load.LeaseKey key) {
    return Optional.ofNullable(byLease.get(key));
  }

  /** Whether some load reads {@code key}'s lease. */
  boolean reads(Load.LeaseKey key) {
    return byLease.containsKey(key);
  }

  /** How many loads read from {@code producerEngineId}. */
  int from(String producerEngineId) {
    return perProducer.getOrDefault(producerEngineId, 0);
  }

  /** A copy of every load, oldest first, so callers may remove while they iterate. */
  List<Load> all() {
    return new ArrayList<>(byRequest.values());
  }

  int size() {
    return byRequest.size();
  }
}
