/**
 * The shape of an engine's KV memory ({@link io.kvbridge.layout.KvLayout}): what model, which
 * heads, how many tokens per block, how a block's bytes are ordered, and its canonical encoding,
 * which the handshake carries and the read digest covers.
 */
package io.kvbridge.layout;
