/**
 * The pull protocol itself, kept once for every transport: {@link
 * io.kvbridge.runtime.PullConnector} is the {@link io.kvbridge.spi.KvConnector} the connectors
 * build on; its producer half ({@link io.kvbridge.runtime.producer}) grants leases and answers
 * handshakes and notifications, its consumer half ({@link io.kvbridge.runtime.consumer}) handshakes
 * with producers, confirms, plans, reads, checks and acknowledges loads, and what both use lives in
 * {@link io.kvbridge.runtime.engine}. Neither half uses the other: they speak through the wire.
 *
 * <p>Engines and connectors use nothing here but the connector and its registry: a transport plugs
 * in below through {@link io.kvbridge.transfer.Transport}, an engine above through {@link
 * io.kvbridge.spi}.
 */
package io.kvbridge.runtime;
