/**
 * D's half of the pull protocol: {@link io.kvbridge.runtime.consumer.Consumer} takes a request's
 * transfer parameters through the {@linkplain io.kvbridge.runtime.consumer.Load load state
 * machine}: handshakes with the producer ({@link io.kvbridge.runtime.consumer.HandshakeClient}),
 * confirms the lease before the engine commits a block ({@link
 * io.kvbridge.runtime.consumer.Confirmation}), plans and posts the read ({@link
 * io.kvbridge.runtime.consumer.TransferPlanner}, {@link
 * io.kvbridge.runtime.consumer.PreparedReads}), checks what arrived, and handles the producers'
 * answers ({@link io.kvbridge.runtime.consumer.ConsumerReplies}).
 *
 * <p>Public only so that {@link io.kvbridge.runtime.PullConnector} can compose it; engines and
 * connectors never use it. It knows nothing of the producer's side, which it speaks to only through
 * {@link io.kvbridge.wire}.
 */
package io.kvbridge.runtime.consumer;
