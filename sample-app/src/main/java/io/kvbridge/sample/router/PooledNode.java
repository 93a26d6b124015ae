package io.kvbridge.sample.router;

import java.net.URI;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * One node of a {@link NodePool}: where it is, its health, and the router's calls to it.
 *
 * <p>Thread-safe: the health is replaced whole; the counters are atomic.
 */
public final class PooledNode {

  private final String name;
  private final Supplier<URI> base;
  private final String healthPath;
  private volatile NodeHealth health = NodeHealth.unprobed();
  private volatile NodeLoad load = NodeLoad.UNKNOWN;

  // Counted without a lock: the router chooses nodes on every request's path.
  final AtomicInteger inFlight = new AtomicInteger();
  final AtomicLong served = new AtomicLong();
  final AtomicLong failed = new AtomicLong();
  final AtomicLong cancelled = new AtomicLong();
  // Guarded by the pool.
  int failedProbes;

  /**
   * A node at {@code base}, asked for on each call (it may depend on the port this server bound),
   * whose health is at {@code healthPath} on the same server.
   *
   * @param name how stats and messages name it
   */
  public PooledNode(String name, Supplier<URI> base, String healthPath) {
    this.name = Objects.requireNonNull(name, "name");
    this.base = Objects.requireNonNull(base, "base");
    this.healthPath = Objects.requireNonNull(healthPath, "healthPath");
  }

  /** A node at a fixed {@code base} URL, named by it. */
  public static PooledNode at(URI base, String healthPath) {
    return new PooledNode(base.toString(), () -> base, healthPath);
  }

  /** How stats and messages name the node. */
  public String name() {
    return name;
  }

  /** What the router last learned of the node's health. */
  public NodeHealth health() {
    return health;
  }

  void health(NodeHealth value) {
    health = Objects.requireNonNull(value, "value");
  }

  /** What the node last published of its load; {@link NodeLoad#UNKNOWN} if it publishes none. */
  public NodeLoad load() {
    return load;
  }

  void load(NodeLoad value) {
    load = Objects.requireNonNull(value, "value");
  }

  /** {@code <base>/v1/completions}. */
  URI completionsUrl() {
    return below("/v1/completions");
  }

  /** {@code <base>/kv/events}: the node's KV events, as Server-Sent Events. */
  URI kvEventsUrl() {
    return below("/kv/events");
  }

  /** {@code <base>/kv/events/snapshot}: what the node's prefix cache holds now. */
  URI kvSnapshotUrl() {
    return below("/kv/events/snapshot");
  }

  /** {@code <base>/v1/leases/revoke}, a prefill node's. */
  URI revokeUrl() {
    return below("/v1/leases/revoke");
  }

  /**
   * The health path on the node's server, whatever path the node's base has; a health path that is
   * an absolute URL is taken as it is.
   */
  URI healthUrl() {
    return base.get().resolve(healthPath);
  }

  private URI below(String path) {
    return URI.create(base.get().toString().replaceAll("/+$", "") + path);
  }

  @Override
  public String toString() {
    return name;
  }
}
