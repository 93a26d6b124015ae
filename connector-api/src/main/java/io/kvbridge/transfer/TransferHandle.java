package io.kvbridge.transfer;

/**
 * A posted transfer. Opaque to callers; every handle is passed to {@link Transport#release} once.
 *
 * @param id a transport-assigned id, unique within the transport
 * @param bytes the number of bytes the transfer moves
 */
public record TransferHandle(long id, long bytes) {}
