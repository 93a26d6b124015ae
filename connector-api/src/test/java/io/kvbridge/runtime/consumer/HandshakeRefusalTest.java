package io.kvbridge.runtime.consumer;

import static io.kvbridge.runtime.consumer.HandshakeFixture.freshLocalAddress;
import static io.kvbridge.runtime.consumer.HandshakeFixture.ranks;
import static io.kvbridge.runtime.consumer.HandshakeFixture.serve;
import static io.kvbridge.runtime.consumer.HandshakeFixture.settings;
import static io.kvbridge.runtime.consumer.HandshakeFixture.stubProducer;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.layout.KvLayout.MemoryOrder;
import io.kvbridge.observe.ConnectorObserver;
import io.kvbridge.runtime.consumer.HandshakeClient.Resolution;
import io.kvbridge.runtime.engine.ConnectorCounters;
import io.kvbridge.runtime.engine.StubTransport;
import io.kvbridge.wire.HandshakeChannel;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * What a producer's refusal of an incompatible layout tells the consumer: the field that differs
 * and the consumer's own value, never the producer's, even without a deployment secret (anyone who
 * reaches the handshake port may ask).
 */
class HandshakeRefusalTest {

  /** The producer's layout: every value in it is distinct from the consumers' below. */
  private static final KvLayout PRODUCER =
      new KvLayout("producer-model@7", 2, 3, 2, 4, 0, 4, 8, 16, 64, MemoryOrder.HEAD_MAJOR);

  private final String address = freshLocalAddress();
  private final HandshakeChannel.Server server =
      serve(address, "p", stubProducer(settings("p", 0x33, () -> 0), PRODUCER));
  private final List<HandshakeClient> clients = new ArrayList<>();

  /**
   * A consumer layout that differs from the producer's in one field, and how each side writes it.
   */
  enum Difference {
    MODEL(
        new KvLayout("consumer-model@1", 2, 3, 2, 4, 0, 4, 8, 16, 64, MemoryOrder.HEAD_MAJOR),
        "model consumer-model@1 differs from the producer's",
        "producer-model@7"),
    HEAD_DIM(
        new KvLayout("producer-model@7", 2, 3, 2, 4, 0, 4, 24, 16, 64, MemoryOrder.HEAD_MAJOR),
        "head_dim 24 differs from the producer's",
        "8"),
    DTYPE(
        new KvLayout("producer-model@7", 1, 3, 2, 4, 0, 4, 8, 16, 64, MemoryOrder.HEAD_MAJOR),
        "dtype_bytes 1 differs from the producer's",
        "2"),
    BLOCK_SIZE(
        new KvLayout("producer-model@7", 2, 3, 2, 4, 0, 4, 8, 24, 64, MemoryOrder.HEAD_MAJOR),
        "tokens_per_block 24 differs from the producer's",
        "16");

    final KvLayout consumer;
    final String told;
    final String producerValue;

    Difference(KvLayout consumer, String told, String producerValue) {
      this.consumer = consumer;
      this.told = told;
      this.producerValue = producerValue;
    }
  }

  @AfterEach
  void close() {
    clients.forEach(HandshakeClient::close);
    server.close();
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(Difference.class)
  void aRefusedLayoutIsToldItsOwnValueAndNeverTheProducers(Difference difference) {
    HandshakeClient client =
        new HandshakeClient(
            settings("c", 1, () -> 0),
            ranks(new StubTransport("c-agent"), difference.consumer),
            new ConnectorCounters(ConnectorObserver.NONE));
    clients.add(client);

    Resolution resolution = client.resolve("p", address, 0x33);

    assertThat(resolution).isInstanceOf(Resolution.Failed.class);
    String reason = ((Resolution.Failed) resolution).reason();
    assertThat(reason)
        .contains("incompatible KV layout: consumer c vs this producer: " + difference.told)
        .doesNotContain(difference.producerValue);
  }
}
