package io.kvbridge.sample.node;

import io.kvbridge.events.EventAuthenticator;
import io.kvbridge.net.HandshakeSecret;
import io.kvbridge.spring.KvBridgeProperties;
import java.util.Optional;

/**
 * Whether the sample authenticates its KV events: with the deployment's shared secret ({@code
 * kvbridge.handshake.secret}) set, every node signs its snapshot and batches ({@link
 * EventAuthenticator}) and the router applies only what carries a valid {@code mac}; without it,
 * neither signs nor checks.
 */
public final class EventAuthentication {

  private EventAuthentication() {}

  /** The authenticator of the configured secret; empty when none is set. */
  public static Optional<EventAuthenticator> of(KvBridgeProperties properties) {
    return Optional.ofNullable(properties.handshake().secret())
        .map(secret -> new EventAuthenticator(HandshakeSecret.of(secret)));
  }
}
