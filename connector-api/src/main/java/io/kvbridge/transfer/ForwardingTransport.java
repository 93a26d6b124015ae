package io.kvbridge.transfer;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A transport that passes every call to another, prepared lists and telemetry included: the base of
 * a decorator that changes or watches a few calls and overrides only those. A decorator written
 * against {@link Transport} directly would fall back to the interface's defaults for the calls it
 * forgets, and so quietly describe every piece again per transfer and report no telemetry.
 *
 * <p>Threads: as safe as the transport it wraps.
 */
public abstract class ForwardingTransport implements Transport {

  private final Transport delegate;

  /** Forwards to {@code delegate}. */
  protected ForwardingTransport(Transport delegate) {
    this.delegate = Objects.requireNonNull(delegate, "delegate");
  }

  /** The transport every call goes to. */
  protected final Transport delegate() {
    return delegate;
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
  public ReadCost readCost() {
    return delegate.readCost();
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
  public String peerAgentName(byte[] metadata) {
    return delegate.peerAgentName(metadata);
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
    return delegate.post(op, local, remoteAgent, remote, notification);
  }

  @Override
  public PreparedList prepare(DescriptorList local) {
    return delegate.prepare(local);
  }

  @Override
  public PreparedList prepare(String remoteAgent, DescriptorList remote) {
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
    return delegate.post(op, local, localIndices, remote, remoteIndices, notification);
  }

  @Override
  public void release(PreparedList list) {
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
  public Optional<TransferTelemetry> telemetry(TransferHandle handle) {
    return delegate.telemetry(handle);
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
