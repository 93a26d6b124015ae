package io.kvbridge.runtime.consumer;

import static io.kvbridge.runtime.consumer.HandshakeFixture.serve;
import static io.kvbridge.runtime.consumer.HandshakeFixture.stubProducer;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvbridge.integrity.ChecksumScheme;
import io.kvbridge.layout.KvLayout;
import io.kvbridge.lease.LeaseToken;
import io.kvbridge.observe.ConnectorObserver;
import io.kvbridge.runtime.engine.ConnectorCounters;
import io.kvbridge.runtime.engine.Ranks;
import io.kvbridge.runtime.engine.StubMemory;
import io.kvbridge.runtime.engine.StubTransport;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.LoadMatch;
import io.kvbridge.spi.TokenIds;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.transfer.KvRegions;
import io.kvbridge.wire.HandshakeChannel;
import io.kvbridge.wire.LeaseRef;
import io.kvbridge.wire.ProtocolMessage;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A request whose every token the engine holds already reads nothing, but its lease is released on
 * the producer once the handshake that started with the match finishes, on a later step.
 */
class ConsumerLocalHitTest {

  private static final KvLayout LAYOUT = KvLayout.opaque("m", 4, 4, 16);

  private final StubTransport transport = new StubTransport("decode-agent");
  private final ConnectorSettings settings = ConnectorSettings.builder("stub", "decode-0").build();
  private final Consumer consumer;
  private final HandshakeChannel.Server server;

  ConsumerLocalHitTest() throws Exception {
    Ranks ranks = new Ranks(List.of(transport));
    ranks.register(0, new KvRegions(LAYOUT, List.of(new StubMemory(0x1000, 256))));
    ConnectorCounters counters = new ConnectorCounters(ConnectorObserver.NONE);
    consumer = new Consumer(settings, ranks, counters);
    consumer.start();
    server =
        serve(
            "tcp://127.0.0.1:0",
            "local-hit-producer",
            stubProducer(
                ConnectorSettings.builder("stub", "local-hit-producer").incarnation(7).build(),
                LAYOUT));
  }

  @AfterEach
  void close() throws Exception {
    server.close();
    consumer.handshakes().close();
  }

  @Test
  void aFullLocalHitReleasesTheLeaseOnceTheProducerIsHandshaken() throws Exception {
    TokenIds prompt = TokenIds.of(new int[8]);
    TransferParams params =
        new TransferParams(
            "local-hit-producer",
            7L,
            "p-1",
            List.of(3),
            4,
            prompt.digest(4),
            LeaseToken.random().value(),
            0L,
            Optional.of(server.address().toString()),
            ChecksumScheme.CRC32C,
            List.of(List.of(0)));

    assertThat(consumer.matchRemote("d-1", prompt, 8, params)).isEqualTo(new LoadMatch.Ready(4, 0));

    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> {
              consumer.progress();
              return !transport.sent.isEmpty();
            });
    assertThat(ProtocolMessage.decode(transport.sent.get(0).message()))
        .isEqualTo(
            new ProtocolMessage.Release(
                new LeaseRef("p-1", params.leaseToken()),
                "decode-0",
                "every token is held locally"));
    assertThat(consumer.inFlight()).isZero();
  }
}
