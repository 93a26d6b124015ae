package io.kvbridge.runtime.consumer;

import static io.kvbridge.runtime.consumer.HandshakeFixture.LAYOUT;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.integrity.ChecksumScheme;
import io.kvbridge.lease.LeaseToken;
import io.kvbridge.observe.ConnectorObserver;
import io.kvbridge.runtime.engine.ConnectorCounters;
import io.kvbridge.runtime.engine.StubTransport;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.TokenIds;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.transfer.MemoryKind;
import io.kvbridge.wire.ProtocolMessage;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class HeartbeatsTest {

  private static final long START = 1_000_000_000L;
  private static final Duration INTERVAL = Duration.ofSeconds(2);

  private final StubTransport transport = new StubTransport("c-agent");
  private final LoadTable loads = new LoadTable();
  private final ProducerPeer peer =
      new ProducerPeer(
          "p",
          "local://p",
          1,
          List.of(new ProducerPeer.Rank("p-agent", LAYOUT, List.of(4096L), 0, MemoryKind.DRAM)),
          new ClockSync(new ClockOffset(0, 1), START));
  private final Heartbeats heartbeats =
      new Heartbeats(
          ConnectorSettings.builder("fake", "c")
              .heartbeatInterval(INTERVAL)
              .clock(() -> START)
              .build(),
          transport,
          loads,
          new ConnectorCounters(ConnectorObserver.NONE));

  @Test
  void aRoundGoesOutOneIntervalAfterTheLastAndItsEchoIsRecognised() {
    addReadyLoads(1);
    long due = START + INTERVAL.toNanos();

    heartbeats.sendIfDue(due - 1);
    assertThat(transport.sent).isEmpty();
    assertThat(heartbeats.isEchoOfLastRound("p", due - 1)).isFalse();

    heartbeats.sendIfDue(due);

    assertThat(transport.sent).extracting(StubTransport.Sent::toAgent).containsExactly("p-agent");
    assertThat(heartbeats.isEchoOfLastRound("p", due)).isTrue();
    assertThat(heartbeats.isEchoOfLastRound("p", due - 1)).isFalse();
    assertThat(heartbeats.isEchoOfLastRound("q", due)).isFalse();
  }

  @Test
  void aFullMessageOfLeasesGoesOutAsOneMessageAndOneMoreAsTwo() {
    addReadyLoads(ProtocolMessage.MAX_HEARTBEAT_LEASES);

    heartbeats.sendIfDue(START + INTERVAL.toNanos());
    assertThat(transport.sent).extracting(StubTransport.Sent::toAgent).containsExactly("p-agent");

    addReadyLoads(1);
    heartbeats.sendIfDue(START + 2 * INTERVAL.toNanos());
    assertThat(transport.sent)
        .extracting(StubTransport.Sent::toAgent)
        .containsExactly("p-agent", "p-agent", "p-agent");
  }

  private void addReadyLoads(int count) {
    int first = loads.size();
    for (int i = first; i < first + count; i++) {
      Load load = new Load("r-" + i, params("req-" + i), 0, 0, Long.MAX_VALUE);
      TestLoads.advance(load, peer, List.of(), Load.State.READY, Long.MAX_VALUE, START);
      loads.add(load);
    }
  }

  private static TransferParams params(String requestId) {
    return new TransferParams(
        "p",
        1,
        requestId,
        List.of(4, 9),
        32,
        TokenIds.of(new int[32]).digest(32),
        LeaseToken.random().value(),
        START,
        Optional.of("local://p"),
        ChecksumScheme.CRC32C,
        List.of(List.of(0x8badf00d, 17), List.of(1, 2)));
  }
}
