package io.kvbridge.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.net.DropReason;
import io.kvbridge.net.HandshakeAddress;
import io.kvbridge.net.HandshakeSecret;
import io.kvbridge.transfer.MemoryKind;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A flood that holds every place of P's handshake server, reopening each connection as soon as P
 * closes it: 80 source addresses × 16 idle connections (more than the total cap of 1,024) plus 20
 * from the consumer's own address (more than the per-address cap of 16). A consumer that must
 * handshake meanwhile still completes within its timeout, every time.
 */
class HandshakeFloodTest {

  private static final KvLayout LAYOUT =
      new KvLayout("model-x", 2, 4, 2, 8, 0, 8, 64, 16, 512, KvLayout.MemoryOrder.HEAD_MAJOR);
  private static final Handshake.Accepted ACCEPTED =
      new Handshake.Accepted(
          "prefill-0",
          9L,
          1L,
          List.of(
              new Handshake.Rank(LAYOUT, List.of(0x1000L), 0, MemoryKind.DRAM, new byte[] {1, 2})));
  private static final Handshake.Request REQUEST =
      new Handshake.Request("decode-0", 7L, List.of(LAYOUT), new byte[] {3});
  private static final Duration CONSUMER_TIMEOUT = Duration.ofSeconds(10);
  private static final int ATTACKING_ADDRESSES = 80;
  private static final int PER_ADDRESS = 16;
  private static final int FROM_THE_CONSUMERS_ADDRESS = 20;

  @ParameterizedTest(name = "with a secret: {0}")
  @ValueSource(booleans = {false, true})
  void consumerCompletesItsHandshakeThroughAFloodOfReopenedIdleConnections(boolean withSecret)
      throws Exception {
    Optional<HandshakeSecret> secret =
        withSecret
            ? Optional.of(HandshakeSecret.of("a deployment secret of some length"))
            : Optional.empty();
    ProducerHandshake producer =
        new ProducerHandshake(secret, request -> ACCEPTED, ProducerHandshake.Listener.NONE);
    HandshakeChannel channel = TcpHandshakeChannel.withLimits(TcpHandshakeChannel.Limits.DEFAULTS);
    try (HandshakeChannel.Server server =
            channel.serve(HandshakeAddress.parse("tcp://127.0.0.1:0"), "prefill-0", producer);
        Flood flood = new Flood(server.address())) {
      flood.start();
      await()
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(
              () -> {
                flood.alive();
                assertThat(flood.open.get())
                    .as(
                        "the flood's open connections (reopened %d, P's drops %s)",
                        flood.reopened.get(), server.droppedConnections())
                    .isGreaterThanOrEqualTo(TcpHandshakeChannel.Limits.DEFAULTS.total() - 16L);
                assertThat(server.droppedConnections().get(DropReason.EVICTED))
                    .as("P's evictions")
                    .isGreaterThan(100L);
              });

      List<Long> millis = new ArrayList<>();
      // Handshake again and again while the flood turns every place over a few times.
      long floodAtStart = flood.reopened.get();
      long turnedOver = 3L * TcpHandshakeChannel.Limits.DEFAULTS.total();
      long giveUpAt = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
      while ((millis.size() < 10 || flood.reopened.get() - floodAtStart < turnedOver)
          && System.nanoTime() < giveUpAt) {
        long start = System.nanoTime();
        ConsumerHandshake.Outcome outcome =
            ConsumerHandshake.run(
                channel, server.address(), REQUEST, secret, CONSUMER_TIMEOUT, System::nanoTime);
        millis.add((System.nanoTime() - start) / 1_000_000);
        assertThat(outcome.response()).isEqualTo(ACCEPTED);
      }

      assertThat(flood.reopened.get() - floodAtStart)
          .as("connections the flood reopened while the consumer handshook")
          .isGreaterThanOrEqualTo(turnedOver);
      assertThat(millis).hasSizeGreaterThanOrEqualTo(10);
      assertThat(millis).allSatisfy(ms -> assertThat(ms).isLessThan(CONSUMER_TIMEOUT.toMillis()));
    }
  }

  /**
   * Idle connections from 127.0.0.2 to 127.0.0.81 and from 127.0.0.1, each reopened as soon as P
   * closes it; one thread, non-blocking.
   */
  private static final class Flood implements AutoCloseable {
    final AtomicLong open = new AtomicLong();
    final AtomicLong reopened = new AtomicLong();
    // What stopped the flood's thread, if anything did.
    private final AtomicReference<Throwable> died = new AtomicReference<>();
    // Sources whose connect failed at once (say a local port still held by an earlier test's
    // socket): tried again on the next turn of the loop.
    private List<String> retry = new ArrayList<>();
    private final InetSocketAddress target;
    private final Selector selector;
    private final AtomicBoolean stop = new AtomicBoolean();
    private final Thread thread;

    Flood(HandshakeAddress server) throws IOException {
      this.target = TcpHandshakeChannel.resolved(server);
      this.selector = Selector.open();
      this.thread = new Thread(this::run, "handshake-flood");
      thread.setDaemon(true);
    }

    void start() {
      thread.start();
    }

    /** True while the flood runs; throws what stopped its thread if something did. */
    boolean alive() {
      Throwable cause = died.get();
      if (cause != null) {
        throw new IllegalStateException("the flood stopped", cause);
      }
      return true;
    }

    private void run() {
      List<String> sources = new ArrayList<>();
      for (int a = 0; a < ATTACKING_ADDRESSES; a++) {
        for (int c = 0; c < PER_ADDRESS; c++) {
          sources.add("127.0.0." + (2 + a));
        }
      }
      for (int c = 0; c < FROM_THE_CONSUMERS_ADDRESS; c++) {
        sources.add("127.0.0.1");
      }
      ByteBuffer sink = ByteBuffer.allocate(4096);
      try {
        for (String source : sources) {
          connect(source);
        }
        while (!stop.get()) {
          selector.select(50);
          List<String> again = retry;
          retry = new ArrayList<>();
          for (String source : again) {
            connect(source);
          }
          for (SelectionKey key : selector.selectedKeys()) {
            SocketChannel channel = (SocketChannel) key.channel();
            String source = (String) key.attachment();
            try {
              if (key.isConnectable()) {
                channel.finishConnect();
                key.interestOps(SelectionKey.OP_READ);
                open.incrementAndGet();
                continue;
              }
              sink.clear();
              if (channel.read(sink) >= 0) {
                continue;
              }
            } catch (IOException closedByP) {
              // Reset or refused: reopen below.
            }
            if (channel.isConnected()) {
              open.decrementAndGet();
            }
            key.cancel();
            channel.close();
            reopened.incrementAndGet();
            connect(source);
          }
          selector.selectedKeys().clear();
        }
      } catch (IOException | RuntimeException e) {
        died.set(e);
      }
    }

    private void connect(String source) throws IOException {
      SocketChannel channel = SocketChannel.open();
      try {
        channel.configureBlocking(false);
        channel.bind(new InetSocketAddress(source, 0));
        channel.connect(target);
        channel.register(selector, SelectionKey.OP_CONNECT, source);
      } catch (IOException refusedAtOnce) {
        channel.close();
        retry.add(source);
      }
    }

    @Override
    public void close() throws IOException {
      stop.set(true);
      try {
        thread.join(10_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      for (SelectionKey key : selector.keys()) {
        key.channel().close();
      }
      selector.close();
    }
  }
}
