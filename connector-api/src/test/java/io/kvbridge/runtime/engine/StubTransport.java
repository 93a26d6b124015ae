package io.kvbridge.runtime.engine;

import io.kvbridge.transfer.Descriptor;
import io.kvbridge.transfer.DescriptorList;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.MemoryKind;
import io.kvbridge.transfer.Notification;
import io.kvbridge.transfer.PreparedList;
import io.kvbridge.transfer.TransferHandle;
import io.kvbridge.transfer.TransferOp;
import io.kvbridge.transfer.TransferStatus;
import io.kvbridge.transfer.TransferTelemetry;
import io.kvbridge.transfer.Transport;
import io.kvbridge.transfer.TransportException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A transport that records what it is asked to prepare, post, release and send, and the metadata it
 * loads and invalidates; it moves no bytes. Its metadata is its agent name.
 *
 * <p>Threads: the metadata events and the notifications sent may be recorded from a handshake
 * server's threads while the test reads them; the rest is for one thread.
 */
public final class StubTransport implements Transport {

  public record IndexedPost(long localList, int[] local, long remoteList, int[] remote) {}

  public record DescribedPost(List<Descriptor> local, String agent, List<Descriptor> remote) {}

  /** A notification sent. */
  public record Sent(String toAgent, byte[] message) {}

  public final List<IndexedPost> indexedPosts = new ArrayList<>();
  public final List<DescribedPost> describedPosts = new ArrayList<>();
  public final List<PreparedList> released = new ArrayList<>();
  public int localPrepares;
  public int remotePrepares;
  public boolean refuseNextIndexedPost;
  public boolean refuseNotifications;
  public boolean refuseReleases;
  public boolean refuseTelemetry;
  public TransferStatus status = TransferStatus.IN_PROGRESS;

  /** How many of the next status looks answer in progress, whatever the transfer's status. */
  public int looksInProgress;

  /**
   * What {@link #status} answers for a handle, where the test set it; {@link #status} otherwise.
   */
  public final Map<TransferHandle, TransferStatus> statusOf = new HashMap<>();

  public final List<TransferHandle> releasedHandles = new ArrayList<>();
  public final List<Sent> sent = new CopyOnWriteArrayList<>();

  /** {@code "load <agent>"} and {@code "invalidate <agent>"}, in order. */
  public final List<String> events = new CopyOnWriteArrayList<>();

  public volatile boolean rejectMetadata;
  private final String agent;
  private long nextId = 1;

  /** A transport whose agent is {@code agent}; its metadata is the agent's name. */
  public StubTransport(String agent) {
    this.agent = agent;
  }

  public StubTransport() {
    this("d0");
  }

  @Override
  public PreparedList prepare(DescriptorList local) {
    localPrepares++;
    return new PreparedList(nextId++, Optional.empty(), local);
  }

  @Override
  public PreparedList prepare(String remoteAgent, DescriptorList remote) {
    remotePrepares++;
    return new PreparedList(nextId++, Optional.of(remoteAgent), remote);
  }

  @Override
  public TransferHandle post(
      TransferOp op,
      PreparedList local,
      int[] localIndices,
      PreparedList remote,
      int[] remoteIndices,
      Optional<byte[]> notification) {
    PreparedList.requireSides(op, local, remote);
    local.checkIndices(localIndices);
    remote.checkIndices(remoteIndices);
    if (refuseNextIndexedPost) {
      refuseNextIndexedPost = false;
      throw new TransportException("peer invalidated");
    }
    indexedPosts.add(
        new IndexedPost(local.id(), localIndices.clone(), remote.id(), remoteIndices.clone()));
    return new TransferHandle(indexedPosts.size(), 0);
  }

  @Override
  public TransferHandle post(
      TransferOp op,
      DescriptorList local,
      String remoteAgent,
      DescriptorList remote,
      Optional<byte[]> notification) {
    describedPosts.add(new DescribedPost(local.descriptors(), remoteAgent, remote.descriptors()));
    return new TransferHandle(-describedPosts.size(), 0);
  }

  @Override
  public void release(PreparedList list) {
    released.add(list);
    if (refuseReleases) {
      throw new TransportException("list " + list.id() + " is unknown");
    }
  }

  @Override
  public Optional<TransferTelemetry> telemetry(TransferHandle handle) {
    if (refuseTelemetry) {
      throw new TransportException("telemetry unavailable");
    }
    return Optional.empty();
  }

  @Override
  public String agentName() {
    return agent;
  }

  @Override
  public MemoryKind memoryKind() {
    return MemoryKind.DRAM;
  }

  @Override
  public KvMemory allocate(long sizeBytes) {
    throw new UnsupportedOperationException();
  }

  @Override
  public void register(KvMemory memory) {}

  @Override
  public void deregister(KvMemory memory) {}

  @Override
  public byte[] localMetadata() {
    return agent.getBytes(StandardCharsets.UTF_8);
  }

  @Override
  public String loadRemoteMetadata(byte[] metadata) {
    String name = new String(metadata, StandardCharsets.UTF_8);
    if (rejectMetadata) {
      throw new TransportException("metadata of " + name + " does not parse");
    }
    events.add("load " + name);
    return name;
  }

  @Override
  public String peerAgentName(byte[] metadata) {
    if (rejectMetadata) {
      throw new TransportException("metadata does not parse");
    }
    return new String(metadata, StandardCharsets.UTF_8);
  }

  @Override
  public void invalidateRemote(String agentName) {
    events.add("invalidate " + agentName);
  }

  @Override
  public TransferStatus status(TransferHandle handle) {
    if (looksInProgress > 0) {
      looksInProgress--;
      return TransferStatus.IN_PROGRESS;
    }
    return statusOf.getOrDefault(handle, status);
  }

  @Override
  public void release(TransferHandle handle) {
    releasedHandles.add(handle);
  }

  @Override
  public void notify(String remoteAgent, byte[] message) {
    if (refuseNotifications) {
      throw new TransportException("agent " + remoteAgent + " is not loaded");
    }
    sent.add(new Sent(remoteAgent, message.clone()));
  }

  @Override
  public List<Notification> drainNotifications() {
    return List.of();
  }

  @Override
  public void close() {}
}
