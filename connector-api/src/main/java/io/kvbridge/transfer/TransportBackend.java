package io.kvbridge.transfer;

import java.util.List;
import java.util.Optional;

/**
 * The mechanism of a transport: what moves bytes and messages, without the books. An {@link
 * AgentCore} keeps the books (what is registered, which peers are loaded, the prepared lists, the
 * posted transfers, whether the agent is closed) and checks the {@link Transport} contract before
 * it calls a backend, so a backend is only asked to do what is allowed; NIXL splits its agent from
 * its backend engines the same way.
 *
 * <p>Each method says what the core checked before calling it. A backend still refuses, with {@link
 * TransportException}, what only its mechanism can know: memory it cannot register, a blob it
 * cannot read, a peer its network cannot reach, a message too large for it.
 *
 * <p>A third connector starts here. Its backend says how its mechanism does each thing, with a
 * prepared list and a request of its own types, and its provider puts the core over it, as {@code
 * NixlTransportProvider} does over {@code NixlBackend}:
 *
 * <pre>{@code
 * final class FileBackend implements TransportBackend<FileBackend.Pieces, Future<?>> {
 *   record Pieces(FileChannel channel, long[] offsets) {}
 *
 *   public void register(KvMemory memory) { ... }          // map the memory to a file
 *   public String loadRemote(byte[] blob, boolean replacing) { ... } // open the peer's files
 *   public boolean covers(String peer, DescriptorList remote) { ... } // inside the peer's files?
 *   public Future<?> post(TransferOp op, DescriptorList local, String peer,
 *       DescriptorList remote, Optional<byte[]> notification) {
 *     return copier.submit(() -> copy(op, local, peer, remote, notification));
 *   }
 *   public TransferStatus status(Future<?> copy) {
 *     return copy.isDone() ? outcome(copy) : TransferStatus.IN_PROGRESS; // DONE or Failed
 *   }
 *   // ... the other methods likewise: no checks of their own, the core made them
 * }
 *
 * public final class FileTransportProvider implements TransportProvider {
 *   public Transport create(ConnectorSettings settings, int rank) {
 *     String agent = TransportProvider.agentName(settings.engineId(), rank);
 *     return new AgentCore<>(new FileBackend(agent));
 *   }
 *   // type() and availability(...) as every provider
 * }
 * }</pre>
 *
 * <p>It then proves itself with the kit's {@code TransportConformanceTest} over the transport its
 * provider creates: the core's checks pass already, and what fails is the mechanism's. Complete
 * backends to read: {@code FakeBackend} in connector-fake (copies within the JVM or through a
 * shared directory) and {@code NixlBackend} in connector-nixl.
 *
 * <p>Threads: the core calls the transfer methods ({@link #covers}, both {@code post}s, {@link
 * #status}, {@link #telemetry}, {@link #release(Object) release} of a request, {@link #notify},
 * {@link #takeNotifications}) from any thread, concurrently; it calls the methods that change what
 * is registered, loaded or prepared, and {@link #close}, one at a time and never during a transfer
 * method. A backend whose mechanism is not safe for concurrent calls serialises them itself.
 *
 * @param <L> the backend's own form of a prepared descriptor list
 * @param <R> the backend's own form of a posted transfer request
 */
public interface TransportBackend<L, R> extends AutoCloseable {

  /**
   * The agent name a metadata blob names, read without loading it.
   *
   * @throws TransportException if the blob is malformed
   */
  String peerAgentName(byte[] metadata);

  /**
   * Loads a peer's metadata blob; returns the peer's agent name. The core read that name first
   * ({@link #peerAgentName}); if that peer is loaded already it released the peer's lists and says
   * {@code replacing}: the blob then replaces what was loaded, never merges with it, and a blob the
   * backend refuses leaves the peer as it was.
   *
   * @throws TransportException if the blob is malformed or names an agent this mechanism cannot
   *     reach
   */
  String loadRemote(byte[] metadata, boolean replacing);

  /** Forgets a loaded peer; the core released the lists prepared of its memory first. */
  void unloadRemote(String agentName);

  /**
   * Whether every piece of {@code remote} lies inside the memory the loaded peer {@code
   * remoteAgent} registered, as its metadata describes it. The core asks before it prepares or
   * posts a remote list, and refuses the list when the answer is no.
   */
  boolean covers(String remoteAgent, DescriptorList remote);

  /**
   * Prepares a list: of local memory when {@code remoteAgent} is empty (the core checked every
   * piece lies in memory registered here), else of that loaded peer's memory (the core checked it
   * {@linkplain #covers covers} them).
   */
  L prepare(Optional<String> remoteAgent, DescriptorList pieces);

  /** Releases a prepared list; the core calls this once per list, never while a post uses it. */
  void releasePrepared(L list);

  /**
   * Posts a transfer described afresh. The core checked that the lists pair, that the peer is
   * loaded and covers {@code remote}, and that every local piece lies in registered memory.
   *
   * @param notification this backend's own copy, sent once the bytes are visible at the peer
   * @throws TransportException if the mechanism refuses it; nothing has moved then
   */
  R post(
      TransferOp op,
      DescriptorList local,
      String remoteAgent,
      DescriptorList remote,
      Optional<byte[]> notification);

  /**
   * Posts a transfer between prepared lists by index. The core checked that both lists are usable
   * and on their sides, that every index lies inside its list and that the selected pieces pair in
   * length. The index arrays are read during the call only.
   *
   * @param remoteAgent the agent {@code remote} was prepared of
   * @throws TransportException if the mechanism refuses it; nothing has moved then
   */
  R post(
      TransferOp op,
      L local,
      int[] localIndices,
      String remoteAgent,
      L remote,
      int[] remoteIndices,
      Optional<byte[]> notification);

  /** The state of a posted request the core has not released. */
  TransferStatus status(R request);

  /**
   * What the mechanism measured of a request {@link #status} reported done; empty by default.
   *
   * @see Transport#telemetry
   */
  default Optional<TransferTelemetry> telemetry(R request) {
    return Optional.empty();
  }

  /** Releases a request, cancelling it where it is still in progress; called once per request. */
  void release(R request);

  /**
   * Registers {@code memory} with the mechanism; the core checked that it is not registered here.
   *
   * @throws TransportException if the mechanism cannot register this memory (say, another
   *     connector's)
   */
  void register(KvMemory memory);

  /**
   * Deregisters {@code memory}; the core checked that it is registered here and released the lists
   * prepared of it first.
   */
  void deregister(KvMemory memory);

  /** A blob that describes this agent and its registered memory to a peer that loads it. */
  byte[] localMetadata();

  /**
   * Allocates memory this backend can register; the core checked that the agent is open.
   *
   * @throws TransportException if the memory cannot be had
   */
  KvMemory allocate(long sizeBytes);

  /** The name the agent is known by to its peers; what its metadata blob names. */
  String agentName();

  /** What {@link #allocate} hands out: host or device memory. */
  MemoryKind memoryKind();

  /** What a READ costs through this mechanism: {@link Transport#readCost()}. */
  default ReadCost readCost() {
    return ReadCost.UNMEASURED;
  }

  /**
   * Sends a small message to a loaded peer.
   *
   * @throws TransportException if the mechanism refuses the message (say, too large)
   */
  void notify(String remoteAgent, byte[] message);

  /** Returns and removes the notifications received so far, in arrival order per sender. */
  List<Notification> takeNotifications();

  /**
   * Frees the mechanism. The core released every request and list and deregistered every memory
   * first; it calls this once.
   */
  @Override
  void close();
}
