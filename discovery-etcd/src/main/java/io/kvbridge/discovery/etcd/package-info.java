/**
 * Engines on etcd: each engine registers itself under a lease kept alive while it runs ({@link
 * io.kvbridge.discovery.etcd.EtcdDiscovery#register}), finds producers' handshake addresses in a
 * local view that a watch keeps current ({@link io.kvbridge.spi.PeerDirectory}), and learns when a
 * peer's registration is deleted, so its connectors free what that peer held ({@link
 * io.kvbridge.spi.KvConnector#peerGone}).
 */
package io.kvbridge.discovery.etcd;
