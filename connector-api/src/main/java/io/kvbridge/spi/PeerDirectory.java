package io.kvbridge.spi;

import java.util.Optional;

/**
 * Where engines find each other when transfer parameters do not say: a discovery service (e.g. the
 * {@code discovery-etcd} module) that knows each live engine's handshake address by engine id.
 *
 * <p>Threads: called from the consumer's engine thread; implementations answer from what they know
 * now (a local view kept up to date in the background), never by waiting on a network.
 */
public interface PeerDirectory {

  /** A directory that knows nobody: transfer parameters must name the handshake address. */
  PeerDirectory NONE = engineId -> Optional.empty();

  /** The handshake address of live producer {@code engineId}, if known. */
  Optional<String> handshakeAddress(String engineId);
}
