package io.kvbridge.sample.router;

import io.kvbridge.sample.node.NodeKind;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

/**
 * The prefill or the decode nodes the router chooses from: a fixed list (nodes configured by URL),
 * or the nodes registered in etcd, which {@link #replace} keeps current. The choice, among the
 * healthy nodes: the one with the most free KV blocks, counted in eighths of the most any candidate
 * has (so a few blocks' difference, stale by up to a refresh interval, does not send every request
 * to one node); then the fewest live leases; then the fewest of this router's calls in flight; ties
 * go round-robin, in the pool's order. Nodes configured by URL publish no load: they are chosen by
 * calls in flight alone.
 *
 * <p>Prefix-aware choice ({@link #acquire(Collection, Map)}): given how many of the prompt's
 * leading blocks each node's cache holds, the choice is made among the nodes holding the most of
 * them, as long as those have at most {@value #CACHE_LOAD_SLACK} more calls in flight than the
 * least busy candidate; a hot prefix therefore spreads once its node is busier than that.
 *
 * <p>A node is healthy until a call to it fails for its own sake, or {@value
 * #FAILED_PROBES_TO_MARK_DOWN} probes in a row find it not UP (a single slow answer, say while its
 * JVM warms up, does not take it out); then it is down until a probe finds it UP.
 *
 * <p>Thread-safe, and a choice never waits for a lock: it reads the nodes' atomic counts and counts
 * its call on the node it chose, so two requests choosing at the same instant may both take the
 * node that was least busy. A lock guards only the replacement of the nodes and the probes'
 * verdicts. O(nodes) per choice.
 */
public final class NodePool {

  /** How a call to a node ended, for its counters. */
  enum Outcome {
    SERVED,
    FAILED,
    CANCELLED
  }

  /** How many probes in a row must find a node not UP to mark it down. */
  static final int FAILED_PROBES_TO_MARK_DOWN = 2;

  /** Free blocks are compared in this many levels of the most any candidate has. */
  static final int FREE_BLOCK_LEVELS = 8;

  /**
   * How many more calls in flight than the least busy candidate a node holding more of a prompt's
   * prefix may have and still be preferred for it.
   */
  static final int CACHE_LOAD_SLACK = 2;

  private final NodeKind kind;
  private final String whenEmpty;
  // Replaced whole under this; read without the lock by the probes and the stats.
  private volatile List<PooledNode> nodes;
  // Advances on every choice, so equally loaded nodes take turns.
  private final AtomicLong turn = new AtomicLong();

  /** A fixed pool of {@code kind} nodes; at least one. */
  public NodePool(NodeKind kind, List<PooledNode> nodes) {
    if (nodes.isEmpty()) {
      throw new IllegalArgumentException("a pool of " + kind.id() + " nodes needs a node");
    }
    this.kind = kind;
    this.nodes = List.copyOf(nodes);
    this.whenEmpty = "";
  }

  private NodePool(NodeKind kind, String whenEmpty) {
    this.kind = kind;
    this.nodes = List.of();
    this.whenEmpty = whenEmpty;
  }

  /**
   * A pool of {@code kind} nodes that {@link #replace} fills, empty until then; {@code whenEmpty}
   * says why there is no node while it is empty (e.g. none is registered in etcd at ...).
   */
  public static NodePool followed(NodeKind kind, String whenEmpty) {
    return new NodePool(kind, whenEmpty);
  }

  /**
   * Makes {@code current} the pool's nodes, in that order, each with its load. A node already in
   * the pool (by name) stays the same node, with its health and counters; a node no longer listed
   * leaves the pool at once: it is chosen no more, while calls already made to it finish.
   */
  public synchronized void replace(Map<PooledNode, NodeLoad> current) {
    Map<String, PooledNode> known = new LinkedHashMap<>();
    nodes.forEach(node -> known.put(node.name(), node));
    List<PooledNode> next = new ArrayList<>();
    current.forEach(
        (node, load) -> {
          PooledNode kept = known.getOrDefault(node.name(), node);
          kept.load(load);
          next.add(kept);
        });
    nodes = List.copyOf(next);
  }

  /** Which kind of node the pool holds. */
  public NodeKind kind() {
    return kind;
  }

  /** The nodes, in the pool's order. */
  public List<PooledNode> nodes() {
    return nodes;
  }

  /**
   * Chooses a healthy node not in {@code excluded} and counts a call to it in flight; the caller
   * must {@link #release} it. Empty if there is none.
   */
  Optional<PooledNode> acquire(Collection<PooledNode> excluded) {
    return acquire(excluded, Map.of());
  }

  /**
   * {@link #acquire(Collection)}, preferring the nodes whose caches hold the most of the prompt's
   * leading blocks ({@code cachedBlocks}; a node not named holds none) unless they are busier than
   * {@value #CACHE_LOAD_SLACK} calls beyond the least busy candidate.
   */
  Optional<PooledNode> acquire(
      Collection<PooledNode> excluded, Map<PooledNode, Integer> cachedBlocks) {
    List<PooledNode> candidates = new ArrayList<>();
    for (PooledNode node : nodes) {
      if (node.health().up() && !excluded.contains(node)) {
        candidates.add(node);
      }
    }
    return chooseAmong(holdingMost(candidates, cachedBlocks));
  }

  /**
   * Chooses, as {@link #acquire(Collection, Map)}, among the healthy nodes whose caches hold at
   * least {@code minBlocks} of the prompt's leading blocks and that are busier than the least busy
   * healthy node by at most {@value #CACHE_LOAD_SLACK} calls, and counts a call to it in flight;
   * empty if none does.
   */
  Optional<PooledNode> acquireHolding(Map<PooledNode, Integer> cachedBlocks, int minBlocks) {
    int leastBusy = Integer.MAX_VALUE;
    for (PooledNode node : nodes) {
      if (node.health().up()) {
        leastBusy = Math.min(leastBusy, node.inFlight.get());
      }
    }
    List<PooledNode> candidates = new ArrayList<>();
    for (PooledNode node : nodes) {
      if (node.health().up()
          && cachedBlocks.getOrDefault(node, 0) >= minBlocks
          && node.inFlight.get() <= leastBusy + CACHE_LOAD_SLACK) {
        candidates.add(node);
      }
    }
    return chooseAmong(holdingMost(candidates, cachedBlocks));
  }

  /** The node {@link #key} orders first among {@code candidates}, its call counted. */
  private Optional<PooledNode> chooseAmong(List<PooledNode> candidates) {
    int mostFree = 0;
    for (PooledNode node : candidates) {
      mostFree = Math.max(mostFree, node.load().freeBlocks().orElse(0));
    }
    List<PooledNode> least = new ArrayList<>();
    long[] best = null;
    for (PooledNode node : candidates) {
      long[] key = key(node, mostFree);
      int order = best == null ? -1 : Arrays.compare(key, best);
      if (order < 0) {
        best = key;
        least.clear();
      }
      if (order <= 0) {
        least.add(node);
      }
    }
    if (least.isEmpty()) {
      return Optional.empty();
    }
    PooledNode chosen = least.get((int) Math.floorMod(turn.getAndIncrement(), (long) least.size()));
    chosen.inFlight.incrementAndGet();
    return Optional.of(chosen);
  }

  /**
   * The candidates not busier than {@value #CACHE_LOAD_SLACK} calls beyond the least busy that hold
   * the most of the prompt's prefix, if any holds some; otherwise every candidate.
   */
  private static List<PooledNode> holdingMost(
      List<PooledNode> candidates, Map<PooledNode, Integer> cachedBlocks) {
    if (cachedBlocks.isEmpty() || candidates.isEmpty()) {
      return candidates;
    }
    int leastBusy = candidates.stream().mapToInt(node -> node.inFlight.get()).min().orElse(0);
    int most = 0;
    List<PooledNode> holding = new ArrayList<>();
    for (PooledNode node : candidates) {
      int cached = cachedBlocks.getOrDefault(node, 0);
      if (cached == 0 || node.inFlight.get() > leastBusy + CACHE_LOAD_SLACK || cached < most) {
        continue;
      }
      if (cached > most) {
        most = cached;
        holding.clear();
      }
      holding.add(node);
    }
    return holding.isEmpty() ? candidates : holding;
  }

  /**
   * The order of choice, smallest first: fewer free-block levels short of the most, fewer live
   * leases, fewer calls in flight. A node that does not say counts as having the most free blocks
   * and no lease.
   */
  private static long[] key(PooledNode node, int mostFree) {
    NodeLoad load = node.load();
    long levelsShort =
        mostFree == 0 || load.freeBlocks().isEmpty()
            ? 0
            : FREE_BLOCK_LEVELS
                // Rounded up: a node within an eighth of the most is not short at all.
                - ((long) load.freeBlocks().getAsInt() * FREE_BLOCK_LEVELS + mostFree - 1)
                    / mostFree;
    return new long[] {levelsShort, load.liveLeases().orElse(0), node.inFlight.get()};
  }

  /** Ends a call {@link #acquire} counted. */
  void release(PooledNode node, Outcome outcome) {
    node.inFlight.decrementAndGet();
    switch (outcome) {
      case SERVED -> node.served.incrementAndGet();
      case FAILED -> node.failed.incrementAndGet();
      case CANCELLED -> node.cancelled.incrementAndGet();
    }
  }

  /**
   * Records a probe of {@code node}: UP makes it healthy at once, anything else in a row downs it.
   */
  synchronized void probed(PooledNode node, NodeHealth health) {
    if (health.up()) {
      node.failedProbes = 0;
      node.health(health);
      return;
    }
    node.failedProbes++;
    if (node.failedProbes >= FAILED_PROBES_TO_MARK_DOWN || !node.health().up()) {
      node.health(health);
    }
  }

  /** Marks {@code node} down after a call that failed for its sake. */
  synchronized void callFailed(PooledNode node, String why) {
    node.health(NodeHealth.down(why));
  }

  /** Whether any node is healthy. */
  public boolean anyHealthy() {
    return nodes.stream().anyMatch(node -> node.health().up());
  }

  /** Each node and why it is down, for an answer that says no node is healthy. */
  String whyDown() {
    List<PooledNode> now = nodes;
    if (now.isEmpty()) {
      return whenEmpty;
    }
    return now.stream()
        .map(node -> node.name() + ": " + node.health().why())
        .collect(Collectors.joining("; "));
  }

  /** A snapshot of every node's health and counters, in the pool's order. */
  public List<NodeStats> stats() {
    return nodes.stream()
        .map(
            node ->
                new NodeStats(
                    node.name(),
                    node.health().up(),
                    node.health().why(),
                    node.inFlight.get(),
                    node.served.get(),
                    node.failed.get(),
                    node.cancelled.get()))
        .toList();
  }
}
