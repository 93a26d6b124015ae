package io.kvbridge.tck;

import io.kvbridge.transfer.DescriptorList;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.MemoryKind;
import io.kvbridge.transfer.Notification;
import io.kvbridge.transfer.PreparedList;
import io.kvbridge.transfer.TransferHandle;
import io.kvbridge.transfer.TransferOp;
import io.kvbridge.transfer.TransferStatus;
import io.kvbridge.transfer.Transport;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Passes every call to the transport it wraps, prepared lists included, and counts how a connector
 * moves its bytes: posts described piece by piece, posts by index from prepared lists, lists
 * prepared and released.
 *
 * <p>Threads: as safe as the wrapped transport; the counts are atomic.
 */
final class RecordingTransport implements Transport {

  private final Transport delegate;
  final AtomicInteger describedPosts = new AtomicInteger();
  final AtomicInteger preparedPosts = new AtomicInteger();
  final AtomicInteger localListsPrepared = new AtomicInteger();
  final AtomicInteger remoteListsPrepared = new AtomicInteger();
  final AtomicInteger listsReleased = new AtomicInteger();

  RecordingTransport(Transport delegate) {
    this.delegate = delegate;
  }

  @Override
  public String agentName() {
    return delegate.agentName();
  }

  @Override
  public MemoryKind memoryKind() {
    return delegate.memoryKind();
  }

  @Override
  public KvMemory allocate(long sizeBytes) {
    return delegate.allocate(sizeBytes);
  }

  @Override
  public void register(KvMemory memory) {
    delegate.register(memory);
  }

  @Override
  public void deregister(KvMemory memory) {
    delegate.deregister(memory);
  }

  @Override
  public byte[] localMetadata() {
    return delegate.localMetadata();
  }

  @Override
  public String loadRemoteMetadata(byte[] metadata) {
    return delegate.loadRemoteMetadata(metadata);
  }

  @Override
  public void invalidateRemote(String agentName) {
    delegate.invalidateRemote(agentName);
  }

  @Override
  public TransferHandle post(
      TransferOp op,
      DescriptorList local,
      String remoteAgent,
      DescriptorList remote,
      Optional<byte[]> notification) {
    describedPosts.incrementAndGet();
    return delegate.post(op, local, remoteAgent, remote, notification);
  }

  @Override
  public PreparedList prepare(DescriptorList local) {
    localListsPrepared.incrementAndGet();
    return delegate.prepare(local);
  }

  @Override
  public PreparedList prepare(String remoteAgent, DescriptorList remote) {
    remoteListsPrepared.incrementAndGet();
    return delegate.prepare(remoteAgent, remote);
  }

  @Override
  public TransferHandle post(
      TransferOp op,
      PreparedList local,
      int[] localIndices,
      PreparedList remote,
      int[] remoteIndices,
      Optional<byte[]> notification) {
    preparedPosts.incrementAndGet();
    return delegate.post(op, local, localIndices, remote, remoteIndices, notification);
  }

  @Override
  public void release(PreparedList list) {
    listsReleased.incrementAndGet();
    delegate.release(list);
  }

  @Override
  public TransferStatus status(TransferHandle handle) {
    return delegate.status(handle);
  }

  @Override
  public void release(TransferHandle handle) {
    delegate.release(handle);
  }

  @Override
  public void notify(String remoteAgent, byte[] message) {
    delegate.notify(remoteAgent, message);
  }

  @Override
  public List<Notification> drainNotifications() {
    return delegate.drainNotifications();
  }

  @Override
  public void close() {
    delegate.close();
  }
}
