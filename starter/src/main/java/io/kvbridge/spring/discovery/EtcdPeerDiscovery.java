package io.kvbridge.spring.discovery;

import io.kvbridge.discovery.etcd.EngineLoad;
import io.kvbridge.discovery.etcd.EtcdDiscovery;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.PeerDirectory;
import io.kvbridge.spring.PeerDiscovery;

/** The application's connectors on etcd: each registers itself and finds producers there. */
final class EtcdPeerDiscovery implements PeerDiscovery {

  private final EtcdDiscovery discovery;
  private final EngineLoad load;

  EtcdPeerDiscovery(EtcdDiscovery discovery, EngineLoad load) {
    this.discovery = discovery;
    this.load = load;
  }

  @Override
  public PeerDirectory directory() {
    return discovery;
  }

  @Override
  public KvConnector register(KvConnector connector) {
    return discovery.register(connector, load);
  }
}
