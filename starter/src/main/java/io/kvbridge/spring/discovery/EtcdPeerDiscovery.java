package io.kvbridge.spring.discovery;

import io.kvbridge.discovery.etcd.EngineAttributes;
import io.kvbridge.discovery.etcd.EngineLoad;
import io.kvbridge.discovery.etcd.EtcdDiscovery;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.PeerDirectory;
import io.kvbridge.spring.PeerDiscovery;

/** The application's connectors on etcd: each registers itself and finds producers there. */
final class EtcdPeerDiscovery implements PeerDiscovery {

  private final EtcdDiscovery discovery;
  private final EngineLoad load;
  private final EngineAttributes attributes;

  EtcdPeerDiscovery(EtcdDiscovery discovery, EngineLoad load, EngineAttributes attributes) {
    this.discovery = discovery;
    this.load = load;
    this.attributes = attributes;
  }

  @Override
  public PeerDirectory directory() {
    return discovery;
  }

  @Override
  public KvConnector register(KvConnector connector) {
    return discovery.register(connector, load, attributes);
  }
}
