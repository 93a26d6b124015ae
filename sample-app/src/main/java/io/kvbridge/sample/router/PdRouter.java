package io.kvbridge.sample.router;

import io.kvbridge.sample.completions.ClientClosedRequestException;
import io.kvbridge.sample.completions.ClientConnection;
import io.kvbridge.sample.completions.CompletionRequest;
import io.kvbridge.sample.completions.CompletionResponse;
import io.kvbridge.sample.completions.KvTransferRequest;
import io.kvbridge.sample.completions.RevokeRequest;
import io.kvbridge.sample.engine.ContextWindow;
import io.kvbridge.sample.node.Node;
import io.kvbridge.sample.node.NodeKind;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.LongConsumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The disaggregated-serving proxy: sends a request to a prefill node with {@code max_tokens=1} and
 * {@code kv_transfer_params: {"do_remote_decode": true}}, takes the parameters the prefill node
 * returns, sends the original request with those parameters to a decode node, and answers with the
 * decode node's completion. Each node is chosen from its {@link NodePool}: a healthy one with the
 * fewest of the router's calls in flight.
 *
 * <p>A request is checked before any node is called, against the same {@link ContextWindow} as the
 * nodes': one that could never be decoded costs the prefill node nothing. Nor is a prefill node
 * called while no decode node is healthy: its lease could not be read. A request that finds no node
 * of a pool healthy first has that pool's down nodes probed once ({@link ProbeOnDemand}; requests
 * arriving meanwhile wait for the same probe), so a node that is back is used at once, not only
 * after the next scheduled probe.
 *
 * <p>Failures, each answered with an HTTP error that names the node(s) and the reason, never with a
 * 200:
 *
 * <ul>
 *   <li>no healthy decode node, or no healthy prefill node, even after probing the down ones: 503
 *       {@code decode_pool_unavailable} or {@code prefill_pool_unavailable}, no node called;
 *   <li>a prefill call that failed (not reached, timed out, broken, a 5xx, an unreadable answer or
 *       a 4xx without the node's reason, which its web server answers, not the node) is tried once
 *       more on another healthy prefill node; a prefill node's 4xx with its reason is the client's
 *       and is passed on with its status;
 *   <li>a decode call is tried once more on another healthy decode node, with the same parameters,
 *       only if the first certainly did not load them: it could not be reached, or it answered 503
 *       (its engine is shut down or failed). After a timeout, a broken connection or a failed load
 *       it may still be reading, or the lease is gone, so the failure is answered;
 *   <li>otherwise a failed call is a 502, or a 504 if the node timed out.
 * </ul>
 *
 * <p>A call that failed for the node's sake (no answer, the router's timeout, an unreadable answer,
 * a 5xx other than a decode node's failed or timed-out load, which is about the prefill node: its
 * lease, or a transfer it did not finish) marks the node down until a probe finds it UP again.
 *
 * <p>No lease is left for the prefill node to expire once the router knows no decode node will read
 * it: if the client went away by the time the prefill node answered, if no decode node is healthy
 * then, or if the decode call (and its one retry) ended without a completion, the router asks the
 * prefill node to revoke the lease at once. If the client goes away while the decode node works,
 * the router closes its connection to the decode node, which cancels the load; the lease ends
 * RELEASED there. Fault injection ({@link DropAfterPrefill}) leaves the lease to expire, on
 * purpose.
 *
 * <p>A prefix-aware router ({@link PrefixRouting}) knows which blocks of each prompt every node's
 * prefix cache holds. It sends a request straight to a healthy decode node that holds enough of the
 * prompt ({@link PrefixRouting#blocksToDecodeAlone}), unless that node is busier than the least
 * busy by more than a few calls: the node computes the rest itself, no prefill node is called, and
 * no lease is granted. Otherwise it prefers, among the nodes not much busier than the least busy,
 * the prefill node and then the decode node holding the most of the prompt.
 *
 * <p>Thread-safe; never blocks: every call is asynchronous.
 */
public final class PdRouter implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(PdRouter.class);

  private final NodeClient nodes;
  private final ContextWindow context;
  private final NodePool prefill;
  private final NodePool decode;
  private final DropAfterPrefill drops;
  private final Optional<PrefixRouting> prefixRouting;
  // Package-private for the meters (PrefixIndexMetrics), which read it alone.
  final AtomicLong prefixRouted = new AtomicLong();
  // Package-private for the meters (PrefixIndexMetrics), which read it alone.
  final AtomicLong prefillPrefixRouted = new AtomicLong();
  // Package-private for the meters (PrefixIndexMetrics), which read it alone.
  final AtomicLong decodedAlone = new AtomicLong();
  private final DecisionTimes decisions = new DecisionTimes();
  private final ProbeOnDemand prefillProbe;
  private final ProbeOnDemand decodeProbe;
  // Package-private for the meters (PrefixIndexMetrics), which read it alone.
  final AtomicLong requests = new AtomicLong();
  private final AtomicLong served = new AtomicLong();
  private final AtomicLong dropped = new AtomicLong();
  private final AtomicLong failed = new AtomicLong();
  private final AtomicLong cancelled = new AtomicLong();
  private final AtomicLong streamed = new AtomicLong();

  /**
   * A router calling the nodes of {@code prefill} and {@code decode} through {@code nodes}. {@code
   * context} is the nodes' model context, which every request must fit.
   */
  public PdRouter(
      NodeClient nodes,
      ContextWindow context,
      NodePool prefill,
      NodePool decode,
      DropAfterPrefill drops) {
    this(nodes, context, prefill, decode, drops, Optional.empty());
  }

  /**
   * A router as {@link #PdRouter(NodeClient, ContextWindow, NodePool, NodePool, DropAfterPrefill)}
   * that, given {@code prefixRouting}, prefers the decode nodes whose prefix caches hold the most
   * of each prompt ({@link NodePool#acquire(java.util.Collection, java.util.Map)}).
   */
  public PdRouter(
      NodeClient nodes,
      ContextWindow context,
      NodePool prefill,
      NodePool decode,
      DropAfterPrefill drops,
      Optional<PrefixRouting> prefixRouting) {
    this.prefixRouting = Objects.requireNonNull(prefixRouting, "prefixRouting");
    this.nodes = Objects.requireNonNull(nodes, "nodes");
    this.context = Objects.requireNonNull(context, "context");
    this.prefill = requireKind(prefill, NodeKind.PREFILL);
    this.decode = requireKind(decode, NodeKind.DECODE);
    this.drops = Objects.requireNonNull(drops, "drops");
    this.prefillProbe = new ProbeOnDemand(prefill, node -> nodes.health(node.healthUrl()));
    this.decodeProbe = new ProbeOnDemand(decode, node -> nodes.health(node.healthUrl()));
  }

  /**
   * Routes one request through prefill and decode, for a client whose connection is {@code client}.
   *
   * @return completes with the decode node's completion, or fails with {@link
   *     io.kvbridge.sample.completions.InvalidCompletionRequestException} if the request is
   *     malformed, {@link io.kvbridge.sample.engine.InvalidPromptException} if it does not fit the
   *     context, {@link NoHealthyNodeException}, {@link NodeCallFailedException}, {@link
   *     DroppedAfterPrefillException} if fault injection dropped it, or {@link
   *     ClientClosedRequestException} if the client went away
   */
  public CompletableFuture<CompletionResponse> route(
      CompletionRequest request, ClientConnection client) {
    requests.incrementAndGet();
    CompletableFuture<CompletionResponse> answer;
    try {
      request.validate(context);
      // The nodes' answers are read whole; a stream is cut from the decode node's completion.
      answer = new Route(request.unstreamed(), client).start();
    } catch (RuntimeException e) {
      answer = CompletableFuture.failedFuture(e);
    }
    return answer.whenComplete((value, failure) -> count(failure));
  }

  /**
   * Asks every node for its health and records the answers; completes once all have answered or
   * timed out. A node found UP is chosen again; one found otherwise by this probe and the one
   * before is marked down (see {@link NodePool}).
   */
  public CompletableFuture<Void> probe() {
    List<CompletableFuture<?>> probes = new ArrayList<>();
    for (NodePool pool : List.of(prefill, decode)) {
      for (PooledNode node : pool.nodes()) {
        try {
          probes.add(
              nodes.health(node.healthUrl()).thenAccept(health -> pool.probed(node, health)));
        } catch (IllegalStateException e) {
          // The node is this server, whose port is not known yet: nothing to ask.
          LOG.debug("not probing {}: {}", node, e.getMessage());
        }
      }
    }
    return CompletableFuture.allOf(probes.toArray(new CompletableFuture<?>[0]));
  }

  /**
   * Whether the router knows what every decode node's cache holds: it is not prefix-aware, or its
   * index follows each node of the decode pool. (A prefill node of another block size than the
   * decode nodes' is never indexed: its blocks are named by other hashes.)
   */
  public boolean followsEveryDecodeNode() {
    return prefixRouting.map(p -> p.followsEvery(List.of(decode))).orElse(true);
  }

  /** Whether each pool holds a healthy node. */
  public boolean hasNodes() {
    return prefill.anyHealthy() && decode.anyHealthy();
  }

  /** The prefill nodes the router chooses from. */
  NodePool prefillPool() {
    return prefill;
  }

  /** The decode nodes the router chooses from. */
  NodePool decodePool() {
    return decode;
  }

  /** What the router knows of its nodes' caches, when it is prefix-aware. */
  Optional<PrefixRouting> prefixRouting() {
    return prefixRouting;
  }

  /** Stops following the nodes' KV events, if the router does. */
  @Override
  public void close() {
    prefixRouting.ifPresent(PrefixRouting::close);
  }

  /** Hands the time of every decision from now on, in nanoseconds, to {@code meter}. */
  void onDecision(LongConsumer meter) {
    decisions.listener(meter);
  }

  /** The router's fault injection, which the demo arms while it runs. */
  public DropAfterPrefill faults() {
    return drops;
  }

  /** What the router did so far, and each node's health and calls. */
  public RouterStats stats() {
    return new RouterStats(
        requests.get(),
        served.get(),
        dropped.get(),
        failed.get(),
        cancelled.get(),
        streamed.get(),
        prefixRouted.get(),
        prefillPrefixRouted.get(),
        decodedAlone.get(),
        decisions.summary(),
        prefixRouting.map(PrefixRouting::stats),
        prefill.stats(),
        decode.stats());
  }

  private void count(@Nullable Throwable failure) {
    if (failure == null) {
      served.incrementAndGet();
      return;
    }
    Throwable cause = NodeClient.unwrapped(failure);
    if (cause instanceof DroppedAfterPrefillException) {
      dropped.incrementAndGet();
    } else if (cause instanceof ClientClosedRequestException) {
      cancelled.incrementAndGet();
    } else {
      failed.incrementAndGet();
    }
  }

  private static NodePool requireKind(NodePool pool, NodeKind kind) {
    if (pool.kind() != kind) {
      throw new IllegalArgumentException(
          "expected a pool of " + kind.id() + " nodes, got " + pool.kind().id());
    }
    return pool;
  }

  /** One request on its way through the nodes. */
  private final class Route {
    private final CompletionRequest request;
    private final ClientConnection client;
    // The hashes of the prompt's full blocks; none when the router is not prefix-aware.
    private final long[] promptHashes;
    // Nanoseconds spent choosing nodes so far; recorded once the decode node is chosen.
    private long deciding;

    Route(CompletionRequest request, ClientConnection client) {
      this.request = request;
      this.client = client;
      long started = System.nanoTime();
      this.promptHashes =
          prefixRouting.map(p -> p.hashesOf(request.prompt())).orElseGet(() -> new long[0]);
      deciding = System.nanoTime() - started;
    }

    CompletableFuture<CompletionResponse> start() {
      if (client.isGone()) {
        throw new ClientClosedRequestException("no node was called");
      }
      return decodeProbe
          .anyHealthy()
          .thenCompose(
              decodeHealthy -> {
                if (!decodeHealthy) {
                  throw new NoHealthyNodeException(decode, "no prefill node was called");
                }
                long started = System.nanoTime();
                Optional<PooledNode> alone = decodeAlone();
                if (alone.isPresent()) {
                  decided(started);
                  decodedAlone.incrementAndGet();
                  prefixRouted.incrementAndGet();
                  return decode(alone.get(), request, null, null);
                }
                Map<PooledNode, Integer> cached = cachedOn(prefill);
                deciding += System.nanoTime() - started;
                return acquire(prefill, prefillProbe, cached, prefillPrefixRouted)
                    .thenCompose(
                        first ->
                            prefill(
                                first.orElseThrow(
                                    () ->
                                        new NoHealthyNodeException(prefill, "no node was called")),
                                null))
                    .thenCompose(this::decodeAfter);
              });
    }

    /**
     * A decode node, its call counted, that holds enough of the prompt to serve it alone ({@link
     * PrefixRouting#blocksToDecodeAlone}): it computes the rest itself, and no prefill node is
     * called, so no lease is granted. Empty if none does, or the router is not prefix-aware.
     */
    private Optional<PooledNode> decodeAlone() {
      if (prefixRouting.isEmpty()) {
        return Optional.empty();
      }
      OptionalInt needed = prefixRouting.get().blocksToDecodeAlone(promptHashes.length);
      if (needed.isEmpty()) {
        return Optional.empty();
      }
      return decode.acquireHolding(cachedOn(decode), needed.getAsInt());
    }

    /** Adds the time since {@code started} to the decision's, and records the decision. */
    private void decided(long started) {
      decisions.record(deciding + System.nanoTime() - started);
    }

    /** How many of the prompt's leading blocks each node of {@code pool} is known to hold. */
    private Map<PooledNode, Integer> cachedOn(NodePool pool) {
      return prefixRouting.map(p -> p.cachedBlocks(pool, promptHashes)).orElse(Map.of());
    }

    /**
     * A healthy node of {@code pool} with its call counted, as {@link NodePool#acquire(
     * java.util.Collection, Map)}, preferring the nodes that hold the most of the prompt ({@code
     * cached}; {@code routed} counts a choice of one that holds some); with none healthy, one found
     * by probing the pool's down nodes, if any is back.
     */
    private CompletableFuture<Optional<PooledNode>> acquire(
        NodePool pool, ProbeOnDemand probe, Map<PooledNode, Integer> cached, AtomicLong routed) {
      long started = System.nanoTime();
      Optional<PooledNode> node = pool.acquire(Set.of(), cached);
      deciding += System.nanoTime() - started;
      CompletableFuture<Optional<PooledNode>> chosen =
          node.isEmpty() && !pool.anyHealthy()
              ? probe.probeDownNodes().thenApply(probed -> pool.acquire(Set.of(), cached))
              : CompletableFuture.completedFuture(node);
      return chosen.thenApply(
          n -> {
            n.filter(c -> cached.getOrDefault(c, 0) > 0).ifPresent(c -> routed.incrementAndGet());
            return n;
          });
    }

    private CompletableFuture<Prefilled> prefill(
        PooledNode node, @Nullable NodeCallFailedException earlier) {
      CompletionRequest toPrefill =
          request
              .withMaxTokens(1)
              .withKvTransferParams(Map.of(KvTransferRequest.DO_REMOTE_DECODE, true));
      return accounted(prefill, node, call(NodeKind.PREFILL, node, toPrefill))
          .handle(
              (answer, failure) -> {
                if (failure == null) {
                  return CompletableFuture.completedFuture(new Prefilled(node, answer));
                }
                NodeCallFailedException f = nodeFailure(failure);
                if (earlier == null && f.retriedOnAnotherPrefillNode() && !client.isGone()) {
                  Optional<PooledNode> other = prefill.acquire(Set.of(node));
                  if (other.isPresent()) {
                    LOG.info("{}; trying prefill node {}", f.getMessage(), other.get());
                    return prefill(other.get(), f);
                  }
                }
                return CompletableFuture.<Prefilled>failedFuture(
                    earlier == null ? f : f.after(earlier));
              })
          .thenCompose(Function.identity());
    }

    private CompletableFuture<CompletionResponse> decodeAfter(Prefilled prefilled) {
      Map<String, Object> params = prefilled.answer().kvTransferParams();
      CompletionResponse.KvInfo kv = prefilled.answer().kvbridge();
      if (kv != null && Node.STREAMED.equals(kv.kvSource())) {
        streamed.incrementAndGet();
      }
      if (client.isGone()) {
        return revoke(prefilled, "the client closed its connection after prefill")
            .thenCompose(
                revoked ->
                    CompletableFuture.failedFuture(
                        new ClientClosedRequestException(
                            "the decode node was not called and the prefill node's lease was"
                                + " revoked")));
      }
      if (params != null && drops.dropNext()) {
        DroppedAfterPrefillException drop =
            new DroppedAfterPrefillException(
                String.valueOf(params.get("request_id")),
                String.valueOf(params.get("producer_engine_id")),
                drops.share());
        LOG.debug("{}", drop.getMessage());
        throw drop;
      }
      long started = System.nanoTime();
      Map<PooledNode, Integer> cached = cachedOn(decode);
      deciding += System.nanoTime() - started;
      return acquire(decode, decodeProbe, cached, prefixRouted)
          .thenCompose(
              node -> {
                decisions.record(deciding);
                if (node.isEmpty()) {
                  NoHealthyNodeException none =
                      new NoHealthyNodeException(
                          decode,
                          "the prefill node's lease was revoked, as no decode node will read it");
                  return revoke(prefilled, "no decode node is healthy")
                      .thenCompose(revoked -> CompletableFuture.failedFuture(none));
                }
                return decode(node.get(), request.withKvTransferParams(params), prefilled, null);
              });
    }

    /**
     * Calls decode node {@code node} with {@code toDecode}: the prefill node's parameters, or, with
     * {@code prefilled} null, the prompt alone, which the node computes itself.
     */
    private CompletableFuture<CompletionResponse> decode(
        PooledNode node,
        CompletionRequest toDecode,
        @Nullable Prefilled prefilled,
        @Nullable NodeCallFailedException earlier) {
      CompletableFuture<CompletionResponse> call = call(NodeKind.DECODE, node, toDecode);
      // Closing the connection is how the decode node learns that nobody waits for its answer.
      client.onGone(() -> call.cancel(true));
      return accounted(decode, node, call)
          .handle(
              (answer, failure) -> {
                if (failure == null) {
                  return CompletableFuture.completedFuture(answer);
                }
                Throwable cause = NodeClient.unwrapped(failure);
                if (cause instanceof CancellationException) {
                  // The decode node cancels the load, which releases the lease.
                  return CompletableFuture.<CompletionResponse>failedFuture(
                      new ClientClosedRequestException(
                          "the decode node's request was cancelled, which releases the lease"));
                }
                if (cause instanceof NodeCallFailedException f
                    && f.decodeNeverStarted()
                    && earlier == null
                    && !client.isGone()) {
                  Optional<PooledNode> other = decode.acquire(Set.of(node));
                  if (other.isPresent()) {
                    LOG.info("{}; trying decode node {}", f.getMessage(), other.get());
                    return decode(other.get(), toDecode, prefilled, f);
                  }
                }
                Throwable last =
                    earlier != null && cause instanceof NodeCallFailedException f
                        ? f.after(earlier)
                        : cause;
                // The client gets an error: nobody will read the lease now, whatever the decode
                // node did with it (a reader still at work finds it gone and fails safely).
                return revoke(prefilled, "the decode call failed")
                    .thenCompose(
                        revoked -> CompletableFuture.<CompletionResponse>failedFuture(last));
              })
          .thenCompose(Function.identity());
    }

    /**
     * Asks the prefill node to give the lease back now (nothing to do without one); never fails,
     * logs what went wrong.
     */
    private CompletableFuture<Void> revoke(@Nullable Prefilled prefilled, String why) {
      if (prefilled == null) {
        return CompletableFuture.completedFuture(null);
      }
      Map<String, Object> params = prefilled.answer().kvTransferParams();
      if (params == null || !(params.get("request_id") instanceof String requestId)) {
        return CompletableFuture.completedFuture(null);
      }
      PooledNode node = prefilled.node();
      CompletableFuture<Boolean> revoked;
      try {
        revoked = nodes.revoke(node.revokeUrl(), new RevokeRequest(requestId, why));
      } catch (RuntimeException e) {
        revoked = CompletableFuture.failedFuture(e);
      }
      return revoked.handle(
          (done, failure) -> {
            if (failure != null) {
              LOG.warn(
                  "prefill node {} could not revoke the lease of {} ({}); it expires instead: {}",
                  node,
                  requestId,
                  why,
                  NodeClient.unwrapped(failure).getMessage());
            } else {
              LOG.debug("prefill node {} revoked {}: {} ({})", node, requestId, done, why);
            }
            return null;
          });
    }

    /** A call to {@code node}; cancelling the returned future aborts it. */
    private CompletableFuture<CompletionResponse> call(
        NodeKind kind, PooledNode node, CompletionRequest body) {
      try {
        return nodes.complete(kind, node.completionsUrl(), body);
      } catch (RuntimeException e) {
        return CompletableFuture.failedFuture(e);
      }
    }
  }

  /** Counts a call's end on its node, and marks the node down if the failure was its own. */
  private static <T> CompletableFuture<T> accounted(
      NodePool pool, PooledNode node, CompletableFuture<T> call) {
    return call.handle(
        (value, failure) -> {
          if (failure == null) {
            pool.release(node, NodePool.Outcome.SERVED);
            return value;
          }
          Throwable cause = NodeClient.unwrapped(failure);
          if (cause instanceof CancellationException) {
            pool.release(node, NodePool.Outcome.CANCELLED);
          } else {
            pool.release(node, NodePool.Outcome.FAILED);
            if (cause instanceof NodeCallFailedException f && f.blamesNode()) {
              pool.callFailed(node, f.getMessage());
              LOG.warn(
                  "{} node {} is down until it is probed UP: {}",
                  pool.kind().id(),
                  node,
                  f.getMessage());
            }
          }
          throw failure instanceof CompletionException c ? c : new CompletionException(failure);
        });
  }

  /** {@code failure} as a node call's failure; anything else is rethrown as it is. */
  private static NodeCallFailedException nodeFailure(Throwable failure) {
    Throwable cause = NodeClient.unwrapped(failure);
    if (cause instanceof NodeCallFailedException f) {
      return f;
    }
    throw cause instanceof RuntimeException r ? r : new CompletionException(cause);
  }

  /** A prefill node's answer, and which node gave it. */
  private record Prefilled(PooledNode node, CompletionResponse answer) {}
}
