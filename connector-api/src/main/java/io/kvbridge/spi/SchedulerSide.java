package io.kvbridge.spi;

import java.util.List;
import java.util.Optional;

/**
 * The deciding half of a connector: one per engine, owns no KV memory, called by the engine's
 * scheduler on its scheduling thread.
 *
 * <p>Threads: every method is called from the engine's scheduling thread only; implementations may
 * share state with the {@link WorkerSide} and then synchronize internally.
 */
public interface SchedulerSide {

  /**
   * Called by a consumer's scheduler for a new request that arrived with a producer's transfer
   * parameters, before it allocates blocks for it, and again on later steps while the answer is
   * {@link LoadMatch#PENDING}. The first call checks the parameters and starts confirming the lease
   * with the producer; no block is committed to the load until the producer confirmed the lease
   * exists for exactly these blocks and this prompt.
   *
   * @param requestId the request's id on this engine
   * @param prompt the request's prompt; the parameters must carry the digest of its first {@code
   *     params.tokens()} tokens, so KV computed for another prompt is never loaded for this one
   * @param localTokens how many of the prompt's first tokens the engine already holds KV for (a
   *     local prefix hit); the load reads only what it lacks, and with every token local it tells
   *     the producer to free the lease at once. Only the first call's value counts: later calls for
   *     the same request ignore it, so the engine keeps those tokens (e.g. pins its cache blocks)
   *     until the load ends
   * @param params the producer's parameters (untrusted: they came through the router); later calls
   *     for the same request must pass the same parameters
   * @return {@link LoadMatch.Ready} (allocate, then {@link #afterAllocate}), {@link
   *     LoadMatch.Pending} (ask again later) or {@link LoadMatch.Unavailable} (apply the policy)
   * @throws InvalidTransferParamsException if {@code params} cannot describe this request; the
   *     rejection is counted and nothing is allocated
   */
  LoadMatch matchRemote(String requestId, TokenIds prompt, int localTokens, TransferParams params);

  /**
   * Called by a consumer's scheduler after it allocated blocks for a request that {@link
   * #matchRemote} answered {@link LoadMatch.Ready} (with tokens to load) for. The connector borrows
   * the blocks that hold the loaded tokens until the load finishes or fails; the engine keeps
   * owning them. In a TP engine every rank has the same block ids.
   *
   * @param requestId the request's id on this engine
   * @param localBlockIds the request's blocks, in token order
   */
  void afterAllocate(String requestId, List<Integer> localBlockIds);

  /**
   * Called by the scheduler once per step; returns the loads accepted since the last call, for
   * {@link WorkerSide#startLoad}. Ownership of the described work passes to the worker side.
   */
  StepMetadata buildStepMetadata();

  /**
   * Called by a producer's scheduler when it starts the prefill of a request whose KV a consumer
   * will read, once the request's blocks are allocated: grants the request's lease now, so that its
   * parameters reach the consumer while P still computes (a <em>streamed</em> lease). As each rank
   * writes a layer's KV of the request it calls {@link WorkerSide#layerSaved}; the consumer reads
   * each layer once every rank saved it. The engine then calls {@link #requestFinished} as for any
   * request: its answer holds the blocks until {@code doneSending}, as for a lease granted there.
   *
   * <p>Answers empty when the request is not streamed (shorter than {@code
   * kvbridge.streaming.min-tokens}, or not a producer): the engine goes on as for any request and
   * {@link #requestFinished} grants the lease once the prefill is done.
   *
   * <p>Until {@link #requestFinished}, {@code doneSending} never names the request, even if its
   * lease ends meanwhile (the engine still computes into its blocks); if it did end, {@link
   * #requestFinished} answers to free the blocks at once.
   */
  Optional<TransferParams> requestStarted(StartedRequest request);

  /**
   * Called by a producer's scheduler when a request finishes or is aborted.
   *
   * <p>A request that finished normally with at least one computed token, and whose KV a consumer
   * will read, gets a lease on every block that holds a computed token (the partly filled last one
   * included): the answer says {@code delayFree}, and the engine keeps every block of the request
   * until {@link WorkerSide#getFinished} names it in {@code doneSending}. An aborted request, one
   * with no computed token, or one nobody will read is freed at once.
   *
   * <p>A request whose lease is streamed ({@link #requestStarted}): the layers a rank has not saved
   * yet count as saved now (the engine says the KV is complete), and the lease of an aborted one is
   * revoked; the answer holds the blocks until {@code doneSending}, unless the lease ended already.
   */
  FinishDecision requestFinished(FinishedRequest request);

  /**
   * Called by a consumer's scheduler when a request it asked {@link #matchRemote} about is aborted
   * or finished before its load was reported received or failed (e.g. the client went away). The
   * load leaves every queue and its heartbeats stop; a read in flight is released, and when this
   * method returns no further byte lands in the request's blocks, which the engine may free at
   * once; the producer is told to release the lease, which ends there as RELEASED.
   *
   * @return whether the connector knew the request (it reports nothing about it afterwards)
   */
  boolean cancelLoad(String requestId, String why);

  /**
   * Called by a producer's scheduler when a request whose blocks are held for a consumer is aborted
   * after it finished (e.g. the client went away). The lease ends as REVOKED; the request appears
   * in the next {@code doneSending}.
   *
   * @return whether a live lease was revoked
   */
  boolean revoke(String requestId, String why);
}
