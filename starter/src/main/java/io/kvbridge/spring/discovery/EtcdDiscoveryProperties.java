package io.kvbridge.spring.discovery;

import io.kvbridge.discovery.etcd.EtcdDiscoverySettings;
import io.kvbridge.spi.InvalidSettingException;
import io.kvbridge.spring.InvalidKvBridgePropertyException;
import java.time.Duration;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Discovery on etcd, under the prefix {@code kvbridge.discovery.etcd}; on when {@code endpoints} is
 * set. The values are checked by {@link EtcdDiscoverySettings} when discovery starts: an invalid
 * one stops start-up with an {@link InvalidKvBridgePropertyException} naming the property.
 *
 * @param endpoints etcd's client URLs, each 'http://host:port' (a list: 'a,b' or item by item).
 *     Setting it turns discovery on: each engine registers under '<prefix>/engines/<engine-id>',
 *     consumers find producers that transfer parameters do not locate, and a peer whose
 *     registration is deleted is gone at once. Empty: off.
 * @param prefix Key prefix under which engines register, starting with '/'.
 * @param ttl How long a registration outlives its engine (the etcd lease's time to live), in whole
 *     seconds: peers learn that an engine died about this long after it stopped.
 * @param refreshInterval How often an engine's published load (free blocks, live leases) is written
 *     again when it changed.
 */
@ConfigurationProperties("kvbridge.discovery.etcd")
public record EtcdDiscoveryProperties(
    List<String> endpoints,
    @DefaultValue(EtcdDiscoverySettings.DEFAULT_PREFIX) String prefix,
    @DefaultValue("5s") Duration ttl,
    @DefaultValue("1s") Duration refreshInterval) {

  /**
   * The settings discovery runs with.
   *
   * @throws InvalidKvBridgePropertyException naming the property of a value discovery cannot run
   *     with
   */
  public EtcdDiscoverySettings settings() {
    try {
      return new EtcdDiscoverySettings(
          EtcdDiscoverySettings.parseEndpoints(endpoints), prefix, ttl, refreshInterval);
    } catch (InvalidSettingException e) {
      throw InvalidKvBridgePropertyException.of(e);
    }
  }
}
