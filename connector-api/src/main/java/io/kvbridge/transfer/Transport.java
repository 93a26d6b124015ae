package io.kvbridge.transfer;

import java.util.List;
import java.util.Optional;

/**
 * The data plane a connector's worker side drives, modelled on a NIXL agent: register memory,
 * exchange metadata blobs, post one-sided READ/WRITE transfers with an optional notification, poll
 * them, and exchange small notifications.
 *
 * <p>Contract (checked by the conformance suite in this module's test jar):
 *
 * <ul>
 *   <li>a transfer touches only memory registered with the transport that owns it; descriptors
 *       outside a registered region are refused with {@link TransportException} before any byte
 *       moves;
 *   <li>a remote agent is usable only after its metadata was loaded, and not after it was
 *       invalidated;
 *   <li>a notification attached to a transfer is delivered to the remote agent only after the
 *       transfer's bytes are visible there; {@link #status} reports DONE only once every byte is in
 *       place;
 *   <li>{@link #drainNotifications()} names the sender as the transport knows it; the payload is
 *       untrusted input.
 * </ul>
 *
 * <p>Threads: implementations are safe for concurrent use by the engine thread, the scheduled sweep
 * and the handshake server.
 */
public interface Transport extends AutoCloseable {

  /** This agent's name, unique among the agents that exchange metadata. */
  String agentName();

  /** The memory kind {@link #allocate} returns, after any automatic choice was made. */
  MemoryKind memoryKind();

  /** Allocates memory of {@link #memoryKind()} suitable for registration; the caller closes it. */
  KvMemory allocate(long sizeBytes);

  /** Registers {@code memory} so transfers may touch it. */
  void register(KvMemory memory);

  /** Deregisters {@code memory}; transfers posted later may not touch it. */
  void deregister(KvMemory memory);

  /** This agent's metadata blob: what a peer loads to reach this agent's registered memory. */
  byte[] localMetadata();

  /**
   * Loads a peer's metadata blob so transfers and notifications can reach it.
   *
   * @return the peer's agent name
   * @throws TransportException if the blob is malformed
   */
  String loadRemoteMetadata(byte[] metadata);

  /** Forgets a peer: later transfers and notifications to it fail. Unknown names are ignored. */
  void invalidateRemote(String agentName);

  /**
   * Posts a one-sided transfer between local memory and {@code remoteAgent}'s memory.
   *
   * @param notification delivered to the remote agent after the bytes are visible there
   * @throws TransportException if the peer is unknown, the lists do not pair, or a descriptor lies
   *     outside registered memory; nothing has moved then
   */
  TransferHandle post(
      TransferOp op,
      DescriptorList local,
      String remoteAgent,
      DescriptorList remote,
      Optional<byte[]> notification);

  /** The state of a posted transfer. */
  TransferStatus status(TransferHandle handle);

  /** Releases a transfer's resources; an in-progress transfer is cancelled where possible. */
  void release(TransferHandle handle);

  /** Sends a small message to a loaded peer. */
  void notify(String remoteAgent, byte[] message);

  /** Returns and removes the notifications received so far, in arrival order per sender. */
  List<Notification> drainNotifications();

  /** Releases every resource of the agent; registered memory stays owned by its caller. */
  @Override
  void close();
}
