/**
 * What binds a lease's KV to its request and checks it: the digest of the prompt tokens the blocks
 * hold ({@link PromptDigest}), the digest of the exact blocks a consumer reads ({@link
 * ReadDigest}), and per-block content checksums ({@link ChecksumScheme}).
 *
 * <p>Every algorithm here is specified byte for byte in {@code docs/protocol.md}, so a peer written
 * in another language computes the same values.
 */
package io.kvbridge.integrity;
