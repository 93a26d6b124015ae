package io.kvbridge.fake;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.runtime.ConnectorRegistry;
import io.kvbridge.spi.ConnectorListener;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.Role;
import io.kvbridge.transfer.KvMemory;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** What a {@link ConnectorListener} hears of a connector's lifecycle, in order, and only once. */
class ConnectorListenerTest {

  private static final KvLayout MODEL =
      new KvLayout("listened", 2, 2, 2, 4, 0, 4, 8, 16, 8, KvLayout.MemoryOrder.HEAD_MAJOR);

  private final List<String> heard = new CopyOnWriteArrayList<>();

  private final ConnectorListener recording =
      new ConnectorListener() {
        @Override
        public void kvCacheRegistered(int rank, KvLayout layout) {
          heard.add("registered rank " + rank + " heads " + layout.headStart());
        }

        @Override
        public void closing() {
          heard.add("closing");
        }

        @Override
        public void closed() {
          heard.add("closed");
        }
      };

  private static KvConnector connector(int tp) {
    return ConnectorRegistry.of(List.of(new FakeTransportProvider()))
        .create(
            ConnectorSettings.builder("fake", "listened-" + UUID.randomUUID())
                .role(Role.PRODUCER)
                .tpDegree(tp)
                .properties(Map.of(FakeTransportProvider.FABRIC, "listeners-" + UUID.randomUUID()))
                .build());
  }

  @Test
  void aListenerHearsEachRankRegisteredThenClosingThenClosedOnce() {
    KvConnector connector = connector(2);
    connector.listen(recording);
    for (int rank = 0; rank < 2; rank++) {
      KvLayout layout = MODEL.forRank(rank, 2);
      KvMemory memory = connector.worker(rank).allocateKvCache(layout);
      connector.worker(rank).registerKvCache(memory, layout);
    }

    connector.close();
    connector.close();

    assertThat(heard)
        .containsExactly(
            "registered rank 0 heads 0", "registered rank 1 heads 2", "closing", "closed");
  }

  @Test
  void whileClosingTheConnectorIsStillOpenAndOnceClosedItIsNot() {
    KvConnector connector = connector(1);
    KvMemory memory = connector.worker().allocateKvCache(MODEL);
    connector.worker().registerKvCache(memory, MODEL);
    List<Boolean> answering = new CopyOnWriteArrayList<>();
    connector.listen(
        new ConnectorListener() {
          @Override
          public void closing() {
            answering.add(open(connector));
          }

          @Override
          public void closed() {
            answering.add(open(connector));
          }
        });

    connector.close();

    assertThat(answering).containsExactly(true, false);
  }

  /** Whether the connector still takes calls: a closed one refuses them. */
  private static boolean open(KvConnector connector) {
    try (KvMemory more = connector.worker().allocateKvCache(MODEL)) {
      return more != null;
    } catch (IllegalStateException closed) {
      return false;
    }
  }

  @Test
  void aListenerWhoseHandleIsClosedHearsNothingMore() throws Exception {
    KvConnector connector = connector(1);
    AutoCloseable handle = connector.listen(recording);

    handle.close();
    connector.close();

    assertThat(heard).isEmpty();
  }
}
