/**
 * The contract between an inference engine and kvbridge, modelled on the points where vLLM calls
 * its KV connector: the {@link io.kvbridge.spi.KvConnector} with its {@link
 * io.kvbridge.spi.SchedulerSide} (one per engine: decides, leases, matches remote prefixes) and
 * {@link io.kvbridge.spi.WorkerSide} (one per rank: owns memory, moves bytes, reports what
 * finished), the values that cross it ({@link io.kvbridge.spi.TransferParams}, {@link
 * io.kvbridge.spi.LoadMatch}, {@link io.kvbridge.spi.FinishDecision} ...), its settings ({@link
 * io.kvbridge.spi.ConnectorSettings}) and how a connector is found by name ({@link
 * io.kvbridge.spi.TransportProvider}, through {@link java.util.ServiceLoader}).
 *
 * <p>Each method's javadoc says which side calls it, when, and what ownership it hands over.
 */
package io.kvbridge.spi;
