package io.kvbridge.spring;

import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.PeerDirectory;

/**
 * A discovery service the connectors of this application take part in (e.g. etcd, through the
 * {@code discovery-etcd} module when {@code kvbridge.discovery.etcd.endpoints} is set): {@link
 * KvConnectors} gives every connector it creates the service's {@link #directory()} and hands the
 * connector to {@link #register} before returning it. Without such a bean, connectors find
 * producers only through the handshake address in transfer parameters.
 *
 * <p>Threads: both methods may be called from any thread.
 */
public interface PeerDiscovery {

  /** No discovery: a directory that knows nobody, and connectors left as they are. */
  PeerDiscovery NONE =
      new PeerDiscovery() {
        @Override
        public PeerDirectory directory() {
          return PeerDirectory.NONE;
        }

        @Override
        public KvConnector register(KvConnector connector) {
          return connector;
        }
      };

  /** Where connectors find producers that transfer parameters do not locate. */
  PeerDirectory directory();

  /**
   * Announces {@code connector}'s engine to its peers and tells the connector from then on when a
   * peer is gone; the announcement is withdrawn when the connector closes (the service listens to
   * its lifecycle, {@link KvConnector#listen}). Returns the connector the application uses. Called
   * before the engine registers its KV cache.
   */
  KvConnector register(KvConnector connector);
}
