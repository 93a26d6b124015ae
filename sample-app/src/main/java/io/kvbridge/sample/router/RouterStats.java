package io.kvbridge.sample.router;

import java.util.List;
import java.util.Optional;

/**
 * What the router did since start.
 *
 * @param requests completion requests received
 * @param served requests answered with a decode node's completion
 * @param dropped requests dropped after prefill by fault injection
 * @param failed requests answered with an error for any other reason
 * @param cancelled requests whose client went away first; their work was cancelled
 * @param streamed requests whose prefill node answered as it granted the lease, before its prefill
 *     finished, so that the decode node read each layer while the next ones computed
 * @param prefixRouted requests sent to a decode node chosen because its prefix cache held the most
 *     of the prompt (those it served alone included)
 * @param prefillPrefixRouted requests sent to a prefill node chosen because its prefix cache held
 *     the most of the prompt
 * @param decodedAlone requests sent straight to a decode node that held enough of the prompt to
 *     serve it alone ({@code kvbridge.sample.router.decode-alone-share}): no prefill node was
 *     called and no lease granted
 * @param decisions how long the router took to choose the nodes of each request (the prompt's
 *     hashes, the prefix index, the load), over its last decisions
 * @param prefixIndex the prefix index the router keeps from its nodes' KV events, when it is
 *     prefix-aware ({@code kvbridge.sample.router.prefix-aware})
 * @param prefill each prefill node: health and calls
 * @param decode each decode node: health and calls
 */
public record RouterStats(
    long requests,
    long served,
    long dropped,
    long failed,
    long cancelled,
    long streamed,
    long prefixRouted,
    long prefillPrefixRouted,
    long decodedAlone,
    DecisionTimes.Summary decisions,
    Optional<PrefixRouting.IndexStats> prefixIndex,
    List<NodeStats> prefill,
    List<NodeStats> decode) {

  /** Copies the lists. */
  public RouterStats {
    prefill = List.copyOf(prefill);
    decode = List.copyOf(decode);
  }
}
