/**
 * KV events: what an engine's caches hold, published so that a router can send each request where
 * its prefix already is.
 *
 * <p>An engine names every full block of KV it caches by a chained hash of the tokens it holds
 * ({@link BlockHashes}: the same on every engine for the same model, block size and tokens), and
 * publishes what it stores and removes as numbered batches ({@link KvEventBatch}) of its
 * incarnation, with a snapshot ({@link CacheSnapshot}) to start from. A router keeps a {@link
 * PrefixIndex} over the engines it routes to: it applies batches in order, detects a gap by
 * sequence number and asks for a snapshot, drops an engine's entries when it restarts or leaves,
 * and refuses (and counts) what it cannot trust. The formats are specified in {@code
 * docs/events.md}, so an engine in another language publishes the same events.
 */
package io.kvbridge.events;
