/**
 * The pull protocol itself, kept once for every transport: {@link
 * io.kvbridge.runtime.PullConnector} is the {@link io.kvbridge.spi.KvConnector} the connectors
 * build on; its producer half grants leases and answers handshakes and notifications, its consumer
 * half handshakes with producers, confirms, plans, reads, checks and acknowledges loads.
 *
 * <p>Nothing here is public but the connector and its settings: a transport plugs in below through
 * {@link io.kvbridge.transfer.Transport}, an engine above through {@link io.kvbridge.spi}.
 */
package io.kvbridge.runtime;
