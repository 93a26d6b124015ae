/**
 * The data plane a connector drives, modelled on a NIXL agent: a {@link
 * io.kvbridge.transfer.Transport} registers {@link io.kvbridge.transfer.KvMemory}, exchanges
 * metadata with peers, posts one-sided READs and WRITEs of {@link
 * io.kvbridge.transfer.DescriptorList}s (or of {@link io.kvbridge.transfer.PreparedList}s by
 * index), and carries small {@link io.kvbridge.transfer.Notification}s.
 *
 * <p>A new transport implements {@link io.kvbridge.transfer.Transport} (a decorator may extend
 * {@link io.kvbridge.transfer.ForwardingTransport}) and proves itself with the kit's {@code
 * TransportConformanceTest} in {@code connector-tck}.
 */
package io.kvbridge.transfer;
