package io.kvbridge.spring;

import io.kvbridge.transfer.DescriptorList;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.MemoryKind;
import io.kvbridge.transfer.Notification;
import io.kvbridge.transfer.TransferHandle;
import io.kvbridge.transfer.TransferOp;
import io.kvbridge.transfer.TransferStatus;
import io.kvbridge.transfer.Transport;
import io.kvbridge.transfer.TransportException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;

/**
 * The least transport a {@link io.kvbridge.protocol.PullConnector} runs on: heap memory, metadata
 * that is just the agent name, no peers' notifications and no byte movement. Enough for leases to
 * be granted, expire and be revoked, which is what the starter's tests exercise.
 */
final class LoopbackTransport implements Transport {

  private final String agentName;

  LoopbackTransport(String agentName) {
    this.agentName = agentName;
  }

  @Override
  public String agentName() {
    return agentName;
  }

  @Override
  public MemoryKind memoryKind() {
    return MemoryKind.DRAM;
  }

  @Override
  public KvMemory allocate(long sizeBytes) {
    return new HeapMemory(Math.toIntExact(sizeBytes));
  }

  @Override
  public void register(KvMemory memory) {}

  @Override
  public void deregister(KvMemory memory) {}

  @Override
  public byte[] localMetadata() {
    return agentName.getBytes(StandardCharsets.UTF_8);
  }

  @Override
  public String loadRemoteMetadata(byte[] metadata) {
    return new String(metadata, StandardCharsets.UTF_8);
  }

  @Override
  public void invalidateRemote(String remoteAgent) {}

  @Override
  public TransferHandle post(
      TransferOp op,
      DescriptorList local,
      String remoteAgent,
      DescriptorList remote,
      Optional<byte[]> notification) {
    throw new TransportException("the loopback transport moves no bytes");
  }

  @Override
  public TransferStatus status(TransferHandle handle) {
    return new TransferStatus.Failed("the loopback transport moves no bytes");
  }

  @Override
  public void release(TransferHandle handle) {}

  @Override
  public void notify(String remoteAgent, byte[] message) {}

  @Override
  public List<Notification> drainNotifications() {
    return List.of();
  }

  @Override
  public void close() {}

  /** Host memory on the Java heap. */
  static final class HeapMemory implements KvMemory {
    private final ByteBuffer bytes;

    HeapMemory(int size) {
      this.bytes = ByteBuffer.allocate(size);
    }

    @Override
    public MemoryKind kind() {
      return MemoryKind.DRAM;
    }

    @Override
    public int deviceId() {
      return 0;
    }

    @Override
    public long address() {
      return 0;
    }

    @Override
    public long sizeBytes() {
      return bytes.capacity();
    }

    @Override
    public synchronized void write(long offset, ByteBuffer src) {
      checkRange(offset, src.remaining());
      bytes.put((int) offset, src, src.position(), src.remaining());
      src.position(src.limit());
    }

    @Override
    public synchronized void read(long offset, ByteBuffer dst) {
      checkRange(offset, dst.remaining());
      dst.put(dst.position(), bytes, (int) offset, dst.remaining());
      dst.position(dst.limit());
    }

    @Override
    public void close() {}
  }
}
