/**
 * P's half of the pull protocol: {@link io.kvbridge.runtime.producer.Producer} grants leases,
 * answers handshakes ({@link io.kvbridge.runtime.producer.HandshakeResponder}) and the consumers'
 * notifications, and collects the leases that ended for {@code doneSending}.
 *
 * <p>Public only so that {@link io.kvbridge.runtime.PullConnector} can compose it; engines and
 * connectors never use it. It knows nothing of the consumer's side, which it speaks to only through
 * {@link io.kvbridge.wire}.
 */
package io.kvbridge.runtime.producer;
