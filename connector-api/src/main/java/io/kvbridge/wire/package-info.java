/**
 * Everything that crosses the network between P and D, byte for byte as {@code docs/protocol.md}
 * specifies it: the handshake's frames ({@link io.kvbridge.wire.Handshake}), its two sides ({@link
 * io.kvbridge.wire.ProducerHandshake}, {@link io.kvbridge.wire.ConsumerHandshake}) with the
 * deployment secret's key schedule ({@link io.kvbridge.net.HandshakeSecret}, {@link
 * io.kvbridge.wire.HandshakeKeys}), the channels that carry a conversation (in the JVM, or over TCP
 * with a server a flood cannot starve), and the notifications of the pull protocol ({@link
 * io.kvbridge.wire.ProtocolMessage}).
 *
 * <p>Every decoder here treats its input as untrusted: a defect is a {@link
 * io.kvbridge.wire.MalformedMessageException}, never another exception.
 */
package io.kvbridge.wire;
