/**
 * What both halves of the pull protocol share about this engine: its ranks ({@link
 * io.kvbridge.runtime.engine.Ranks}), its counters ({@link
 * io.kvbridge.runtime.engine.ConnectorCounters}) and the checksums of a lease's blocks ({@link
 * io.kvbridge.runtime.engine.BlockChecksums}), which P records and D checks.
 *
 * <p>Public only so that both sides and {@link io.kvbridge.runtime.PullConnector} can use it;
 * engines and connectors never do.
 */
package io.kvbridge.runtime.engine;
