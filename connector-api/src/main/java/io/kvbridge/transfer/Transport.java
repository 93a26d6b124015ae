package io.kvbridge.transfer;

import java.util.List;
import java.util.Optional;

/**
 * The data plane a connector's worker side drives, modelled on a NIXL agent: register memory,
 * exchange metadata blobs, post one-sided READ/WRITE transfers with an optional notification, poll
 * them, and exchange small notifications.
 *
 * <p>Contract (checked by {@code TransportConformanceTest} in {@code connector-tck}):
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
 *       untrusted input;
 *   <li>a {@linkplain PreparedList prepared list} is checked once, when it is prepared, as a
 *       descriptor list of a post would be; a post by indices checks only the indices, the pairing
 *       of the selected pieces and that both lists are still usable (see {@link PreparedList}).
 * </ul>
 *
 * <p>Preparing is optional for an implementation: the default methods keep the list and post the
 * selected pieces through {@link #post(TransferOp, DescriptorList, String, DescriptorList,
 * Optional)}, so a transport that does not override them (a decorator, say) behaves as if every
 * transfer were described afresh, and a list it returns stays usable as long as a post of its
 * pieces would be: releasing it does nothing, and a list of a reloaded peer keeps working. The
 * conformance suite checks the full contract of {@link PreparedList} on transports that prepare
 * ahead (the connectors' own).
 *
 * <p>A connector does not implement this contract itself: it supplies a {@link TransportBackend},
 * the mechanism alone, and its provider returns an {@link AgentCore} over it, which keeps the books
 * and makes every check above once for all connectors:
 *
 * <pre>{@code
 * public Transport create(ConnectorSettings settings, int rank) {
 *   return new AgentCore<>(new FileBackend(TransportProvider.agentName(settings.engineId(), rank)));
 * }
 * }</pre>
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

  /**
   * Deregisters {@code memory}; transfers posted later may not touch it, and lists prepared of it
   * are no longer usable.
   */
  void deregister(KvMemory memory);

  /** This agent's metadata blob: what a peer loads to reach this agent's registered memory. */
  byte[] localMetadata();

  /**
   * Loads a peer's metadata blob so transfers and notifications can reach it. A blob of a peer
   * loaded before replaces the one loaded then, and the lists prepared of that peer's memory are no
   * longer usable.
   *
   * @return the peer's agent name
   * @throws TransportException if the blob is malformed
   */
  String loadRemoteMetadata(byte[] metadata);

  /**
   * The agent name a peer's metadata blob names, read without loading it: the name {@link
   * #loadRemoteMetadata} would return for the blob. Nothing this transport knows changes, so a
   * caller can check whose blob it holds (say, that it does not name a peer it already trusts under
   * another identity) before it loads anything.
   *
   * @throws TransportException if the blob is malformed
   */
  String peerAgentName(byte[] metadata);

  /**
   * Forgets a peer: later transfers and notifications to it fail, and the lists prepared of its
   * memory are no longer usable. Unknown names are ignored.
   */
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

  /**
   * Prepares a list of local pieces to post transfers from by index.
   *
   * @throws TransportException if a piece lies outside the memory registered here
   */
  default PreparedList prepare(DescriptorList local) {
    return new PreparedList(0, Optional.empty(), local);
  }

  /**
   * Prepares a list of {@code remoteAgent}'s pieces to post transfers to or from by index.
   *
   * @throws TransportException if the peer is unknown or a piece lies outside the memory its loaded
   *     metadata describes
   */
  default PreparedList prepare(String remoteAgent, DescriptorList remote) {
    return new PreparedList(0, Optional.of(remoteAgent), remote);
  }

  /**
   * Posts a one-sided transfer between the pieces {@code localIndices} of {@code local} and the
   * pieces {@code remoteIndices} of {@code remote}, paired position by position. The index arrays
   * are read during the call only.
   *
   * @param local a list this transport prepared of its own memory
   * @param remote a list this transport prepared of a peer's memory
   * @param notification delivered to the remote agent after the bytes are visible there
   * @throws TransportException if a list is not usable (released, from another transport, on the
   *     wrong side, its peer invalidated or reloaded since, its local memory deregistered), an
   *     index lies outside its list, or the index arrays differ in length or select pieces of
   *     different lengths; nothing has moved then
   */
  default TransferHandle post(
      TransferOp op,
      PreparedList local,
      int[] localIndices,
      PreparedList remote,
      int[] remoteIndices,
      Optional<byte[]> notification) {
    PreparedList.requireSides(op, local, remote);
    return post(
        op,
        local.select(localIndices),
        remote.remoteAgent().get(),
        remote.select(remoteIndices),
        notification);
  }

  /**
   * Releases a prepared list; releasing it again, or a list that is no longer usable, is harmless.
   */
  default void release(PreparedList list) {
    // Nothing was prepared ahead.
  }

  /** The state of a posted transfer. */
  TransferStatus status(TransferHandle handle);

  /** Releases a transfer's resources; an in-progress transfer is cancelled where possible. */
  void release(TransferHandle handle);

  /**
   * What the transport itself measured of a finished transfer, for transports that measure their
   * own transfers (NIXL with {@code nixl.telemetry=true}).
   *
   * <p>Available from the moment {@link #status} reported the transfer {@linkplain
   * TransferStatus.Done done} until its handle is {@linkplain #release(TransferHandle) released}:
   * releasing drops it, so a caller that wants it reads it in between. Empty for a transfer still
   * in progress, failed, released or unknown, and always empty for a transport that measures
   * nothing (the default) or was not asked to. Any thread may call it, like every other method; it
   * reads what was measured and never waits for the transfer.
   */
  default Optional<TransferTelemetry> telemetry(TransferHandle handle) {
    return Optional.empty();
  }

  /**
   * What a READ through this transport costs, per descriptor and per byte, for memory of {@link
   * #memoryKind()}: the figures a consumer weighs a staged read by ({@link ReadCost}). {@link
   * ReadCost#UNMEASURED} unless the transport says.
   */
  default ReadCost readCost() {
    return ReadCost.UNMEASURED;
  }

  /** Sends a small message to a loaded peer. */
  void notify(String remoteAgent, byte[] message);

  /** Returns and removes the notifications received so far, in arrival order per sender. */
  List<Notification> drainNotifications();

  /**
   * Releases every resource of the agent, prepared lists included; registered memory stays owned by
   * its caller.
   */
  @Override
  void close();
}
