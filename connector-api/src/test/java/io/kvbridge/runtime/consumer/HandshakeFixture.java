package io.kvbridge.runtime.consumer;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.layout.KvLayout.MemoryOrder;
import io.kvbridge.net.HandshakeAddress;
import io.kvbridge.observe.ConnectorObserver;
import io.kvbridge.observe.RejectedInput;
import io.kvbridge.runtime.engine.ConnectorCounters;
import io.kvbridge.runtime.engine.Ranks;
import io.kvbridge.runtime.engine.StubMemory;
import io.kvbridge.runtime.engine.StubTransport;
import io.kvbridge.runtime.producer.HandshakeResponder;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.time.MonotonicClock;
import io.kvbridge.transfer.KvRegions;
import io.kvbridge.wire.HandshakeChannel;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Engines for handshake tests, in this JVM: one-rank engines registered with a small layout over a
 * {@link StubTransport}, and an observer that records the handshake events.
 */
public final class HandshakeFixture {

  static final KvLayout LAYOUT =
      new KvLayout("m", 2, 3, 2, 4, 0, 4, 8, 16, 64, MemoryOrder.HEAD_MAJOR);

  private static final AtomicInteger NAMES = new AtomicInteger();

  private HandshakeFixture() {}

  /** A local handshake address no other test uses. */
  public static String freshLocalAddress() {
    return "local://handshake-test-" + NAMES.incrementAndGet();
  }

  public static ConnectorSettings settings(
      String engineId, long incarnation, MonotonicClock clock) {
    return ConnectorSettings.builder("fake", engineId)
        .incarnation(incarnation)
        .clock(clock)
        .build();
  }

  /**
   * An engine of one rank, registered with {@link #LAYOUT}, that speaks through {@code transport}.
   */
  public static Ranks ranks(StubTransport transport) {
    return ranks(transport, LAYOUT);
  }

  /**
   * An engine of one rank, registered with {@code layout}, that speaks through {@code transport}.
   */
  public static Ranks ranks(StubTransport transport, KvLayout layout) {
    Ranks ranks = new Ranks(List.of(transport));
    ranks.register(0, new KvRegions(layout, List.of(new StubMemory(4096, layout.totalBytes()))));
    return ranks;
  }

  /**
   * A producer of one rank with {@code layout} over a stub transport whose agent is the engine id
   * and {@code -agent}, answering handshakes as {@code settings} say; it counts nothing and ends no
   * lease when a consumer restarts.
   */
  public static HandshakeResponder stubProducer(ConnectorSettings settings, KvLayout layout) {
    return new HandshakeResponder(
        settings,
        ranks(new StubTransport(settings.engineId() + "-agent"), layout),
        new ConnectorCounters(ConnectorObserver.NONE),
        (engineId, oldIncarnation, newIncarnation) -> {});
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

  /** Records handshake events as text, and the thread that reported each failure. */
  public static final class RecordingObserver implements ConnectorObserver {
    public final List<String> events = new CopyOnWriteArrayList<>();
    public final List<Thread> failureThreads = new CopyOnWriteArrayList<>();

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

    public List<String> starting(String prefix) {
      return events.stream().filter(e -> e.startsWith(prefix)).toList();
    }
  }
}
