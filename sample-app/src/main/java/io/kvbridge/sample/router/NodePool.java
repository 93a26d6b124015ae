package io.kvbridge.sample.router;

import io.kvbridge.sample.node.NodeKind;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The prefill or the decode nodes the router chooses from. The choice: among the healthy nodes, the
 * one with the fewest of this router's calls in flight; ties go round-robin, in the order the nodes
 * were configured.
 *
 * <p>A node is healthy until a call to it fails for its own sake, or {@value
 * #FAILED_PROBES_TO_MARK_DOWN} probes in a row find it not UP (a single slow answer, say while its
 * JVM warms up, does not take it out); then it is down until a probe finds it UP.
 *
 * <p>Thread-safe: the choice and the counters are taken under the pool's lock; O(nodes) per choice.
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

  private final NodeKind kind;
  private final List<PooledNode> nodes;
  // Guarded by this: advances on every choice, so equally loaded nodes take turns.
  private long turn;

  /** A pool of {@code kind} nodes; at least one. */
  public NodePool(NodeKind kind, List<PooledNode> nodes) {
    if (nodes.isEmpty()) {
      throw new IllegalArgumentException("a pool of " + kind.id() + " nodes needs a node");
    }
    this.kind = kind;
    this.nodes = List.copyOf(nodes);
  }

  /** Which kind of node the pool holds. */
  public NodeKind kind() {
    return kind;
  }

  /** The nodes, in configured order. */
  public List<PooledNode> nodes() {
    return nodes;
  }

  /**
   * Chooses a healthy node not in {@code excluded} and counts a call to it in flight; the caller
   * must {@link #release} it. Empty if there is none.
   */
  synchronized Optional<PooledNode> acquire(Collection<PooledNode> excluded) {
    List<PooledNode> least = new ArrayList<>();
    int fewest = Integer.MAX_VALUE;
    for (PooledNode node : nodes) {
      if (!node.health().up() || excluded.contains(node)) {
        continue;
      }
      if (node.inFlight < fewest) {
        fewest = node.inFlight;
        least.clear();
      }
      if (node.inFlight == fewest) {
        least.add(node);
      }
    }
    if (least.isEmpty()) {
      return Optional.empty();
    }
    PooledNode chosen = least.get((int) Math.floorMod(turn++, (long) least.size()));
    chosen.inFlight++;
    return Optional.of(chosen);
  }

  /** Ends a call {@link #acquire} counted. */
  synchronized void release(PooledNode node, Outcome outcome) {
    node.inFlight--;
    switch (outcome) {
      case SERVED -> node.served++;
      case FAILED -> node.failed++;
      case CANCELLED -> node.cancelled++;
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
    return nodes.stream()
        .map(node -> node.name() + ": " + node.health().why())
        .collect(Collectors.joining("; "));
  }

  /** A snapshot of every node's health and counters, in configured order. */
  public synchronized List<NodeStats> stats() {
    return nodes.stream()
        .map(
            node ->
                new NodeStats(
                    node.name(),
                    node.health().up(),
                    node.health().why(),
                    node.inFlight,
                    node.served,
                    node.failed,
                    node.cancelled))
        .toList();
  }
}
