/**
 * The few network values that engines, connector authors and the handshake share: where an engine
 * answers handshakes ({@link io.kvbridge.net.HandshakeAddress}), the deployment's secret ({@link
 * io.kvbridge.net.HandshakeSecret}) and why a handshake server dropped a connection ({@link
 * io.kvbridge.net.DropReason}). The {@code spi} speaks of them without knowing the wire format, and
 * the {@code wire} package carries them without knowing the {@code spi}.
 */
package io.kvbridge.net;
