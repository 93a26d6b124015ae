/**
 * The data plane a connector drives, modelled on a NIXL agent: a {@link
 * io.kvbridge.transfer.Transport} registers {@link io.kvbridge.transfer.KvMemory}, exchanges
 * metadata with peers, posts one-sided READs and WRITEs of {@link
 * io.kvbridge.transfer.DescriptorList}s (or of {@link io.kvbridge.transfer.PreparedList}s by
 * index), and carries small {@link io.kvbridge.transfer.Notification}s.
 *
 * <p>Every connector's transport is an {@link io.kvbridge.transfer.AgentCore}: the books
 * (registered memory, loaded peers, prepared lists, posted transfers, the closed state) and the
 * contract's checks, kept once, over a connector's {@link io.kvbridge.transfer.TransportBackend},
 * which only moves bytes and messages. A new connector implements a backend; its provider returns
 * {@code new AgentCore<>(backend)}; the kit's {@code TransportConformanceTest} in {@code
 * connector-tck} proves it. A decorator of the whole contract may extend {@link
 * io.kvbridge.transfer.ForwardingTransport}.
 */
package io.kvbridge.transfer;
