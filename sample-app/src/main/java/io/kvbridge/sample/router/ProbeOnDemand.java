package io.kvbridge.sample.router;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Probes the down nodes of a pool that has no healthy node, when a request needs one: a node that
 * came back (say, restarted) is chosen at once rather than at the next scheduled probe, and the
 * request is refused only if none did. One probe at a time: every caller that asks while one runs
 * waits for that one; a caller that asks after it ended starts the next. A probe lasts at most as
 * long as one node's health call (every node is asked at once), which the health timeout bounds; it
 * never fails.
 *
 * <p>Thread-safe.
 */
final class ProbeOnDemand {

  private static final Logger LOG = LoggerFactory.getLogger(ProbeOnDemand.class);

  private final NodePool pool;
  private final Function<PooledNode, CompletableFuture<NodeHealth>> health;
  // Guarded by this: the probe under way, null when none is.
  private @Nullable CompletableFuture<Void> running;

  /** Probes the nodes of {@code pool}, asking each for its health with {@code health}. */
  ProbeOnDemand(NodePool pool, Function<PooledNode, CompletableFuture<NodeHealth>> health) {
    this.pool = Objects.requireNonNull(pool, "pool");
    this.health = Objects.requireNonNull(health, "health");
  }

  /**
   * Whether the pool has a healthy node: at once when it has, else once its down nodes have been
   * probed (by this call or by the probe already under way).
   */
  CompletableFuture<Boolean> anyHealthy() {
    if (pool.anyHealthy()) {
      return CompletableFuture.completedFuture(true);
    }
    return probeDownNodes().thenApply(probed -> pool.anyHealthy());
  }

  /** Probes every node of the pool that is down, or joins the probe under way. */
  CompletableFuture<Void> probeDownNodes() {
    CompletableFuture<Void> probe;
    synchronized (this) {
      if (running != null) {
        return running;
      }
      probe = new CompletableFuture<>();
      running = probe;
    }
    List<CompletableFuture<?>> asked = new ArrayList<>();
    for (PooledNode node : pool.nodes()) {
      if (node.health().up()) {
        continue;
      }
      try {
        asked.add(health.apply(node).thenAccept(answer -> pool.probed(node, answer)));
      } catch (RuntimeException e) {
        // E.g. the node is this server, whose port is not known yet: nothing to ask.
        LOG.debug("not probing {}: {}", node, e.getMessage());
      }
    }
    CompletableFuture.allOf(asked.toArray(new CompletableFuture<?>[0]))
        .whenComplete(
            (done, failure) -> {
              if (failure != null) {
                LOG.warn("probing the down {} nodes failed", pool.kind().id(), failure);
              }
              synchronized (this) {
                running = null;
              }
              probe.complete(null);
            });
    return probe;
  }
}
