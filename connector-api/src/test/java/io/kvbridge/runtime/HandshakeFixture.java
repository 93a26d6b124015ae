package io.kvbridge.runtime;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.layout.KvLayout.MemoryOrder;
import io.kvbridge.observe.ConnectorObserver;
import io.kvbridge.observe.RejectedInput;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.time.MonotonicClock;
import io.kvbridge.transfer.DescriptorList;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.MemoryKind;
import io.kvbridge.transfer.Notification;
import io.kvbridge.transfer.TransferHandle;
import io.kvbridge.transfer.TransferOp;
import io.kvbridge.transfer.TransferStatus;
import io.kvbridge.transfer.Transport;
import io.kvbridge.transfer.TransportException;
import io.kvbridge.wire.HandshakeAddress;
import io.kvbridge.wire.HandshakeChannel;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Engines for handshake tests, in this JVM: a transport that only records the metadata it loads and
 * invalidates, one-rank engines registered with a small layout, and an observer that records the
 * handshake events.
 */
final class HandshakeFixture {

  static final KvLayout LAYOUT =
      new KvLayout("m", 2, 3, 2, 4, 0, 4, 8, 16, 64, MemoryOrder.HEAD_MAJOR);

  private static final AtomicInteger NAMES = new AtomicInteger();

  private HandshakeFixture() {}

  /** A local handshake address no other test uses. */
  static String freshLocalAddress() {
    return "local://handshake-test-" + NAMES.incrementAndGet();
  }

  static ConnectorSettings settings(String engineId, long incarnation, MonotonicClock clock) {
    return ConnectorSettings.builder("fake", engineId)
        .incarnation(incarnation)
        .clock(clock)
        .build();
  }

  /** An engine of one rank, registered, that speaks through {@code transport}. */
  static Ranks ranks(RecordingTransport transport) {
    Ranks ranks = new Ranks(List.of(transport));
    ranks.register(0, new StubMemory(), LAYOUT);
    return ranks;
  }

  /** Serves {@code responder} at {@code address}; close the result to stop answering. */
  static HandshakeChannel.Server serve(
      String address, String engineId, HandshakeChannel.Responder responder) {
    HandshakeAddress parsed = HandshakeAddress.parse(address);
    try {
      return HandshakeChannel.forAddress(parsed).serve(parsed, engineId, responder);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Records what is loaded and invalidated; its metadata is its agent name. */
  static final class RecordingTransport implements Transport {
    final String agent;
    final List<String> events = new CopyOnWriteArrayList<>();
    final List<String> notified = new CopyOnWriteArrayList<>();
    volatile boolean rejectMetadata;

    RecordingTransport(String agent) {
      this.agent = agent;
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
    public void invalidateRemote(String agentName) {
      events.add("invalidate " + agentName);
    }

    @Override
    public TransferHandle post(
        TransferOp op,
        DescriptorList local,
        String remoteAgent,
        DescriptorList remote,
        Optional<byte[]> notification) {
      throw new UnsupportedOperationException();
    }

    @Override
    public TransferStatus status(TransferHandle handle) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void release(TransferHandle handle) {}

    @Override
    public void notify(String remoteAgent, byte[] message) {
      notified.add(remoteAgent);
    }

    @Override
    public List<Notification> drainNotifications() {
      return List.of();
    }

    @Override
    public void close() {}
  }

  /** Records handshake events as text, and the thread that reported each failure. */
  static final class RecordingObserver implements ConnectorObserver {
    final List<String> events = new CopyOnWriteArrayList<>();
    final List<Thread> failureThreads = new CopyOnWriteArrayList<>();

    @Override
    public void rejected(RejectedInput kind, String detail) {
      events.add("rejected " + kind + ": " + detail);
    }

    @Override
    public void handshakeCompleted(String producerEngineId, long nanos) {
      events.add("completed " + producerEngineId + " in " + nanos);
    }

    @Override
    public void handshakeFailed(String producerEngineId, long nanos, String reason) {
      failureThreads.add(Thread.currentThread());
      events.add("failed " + producerEngineId + " in " + nanos + ": " + reason);
    }

    @Override
    public void clockEstimated(String producerEngineId, long offsetNanos, long uncertaintyNanos) {
      events.add("clock " + producerEngineId + " " + offsetNanos + " ±" + uncertaintyNanos);
    }

    List<String> starting(String prefix) {
      return events.stream().filter(e -> e.startsWith(prefix)).toList();
    }
  }

  private static final class StubMemory implements KvMemory {
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
      return 4096;
    }

    @Override
    public long sizeBytes() {
      return LAYOUT.totalBytes();
    }

    @Override
    public void write(long offset, ByteBuffer src) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void read(long offset, ByteBuffer dst) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void close() {}
  }
}
