package io.kvbridge.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.integrity.ChecksumScheme;
import io.kvbridge.lease.LeaseToken;
import io.kvbridge.spi.TokenIds;
import io.kvbridge.spi.TransferParams;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class LoadTableTest {

  private static Load load(String requestId, String producer, String producerRequestId) {
    TransferParams params =
        new TransferParams(
            producer,
            1L,
            producerRequestId,
            List.of(0),
            4,
            TokenIds.of(new int[4]).digest(4),
            LeaseToken.random().value(),
            0L,
            Optional.empty(),
            ChecksumScheme.CRC32C,
            List.of(List.of(0)));
    return new Load(requestId, params, 0, 0L, 0L);
  }

  private final LoadTable table = new LoadTable();

  @Test
  void countsLoadsPerProducerAsTheyComeAndGo() {
    Load a = load("a", "p", "pa");
    Load b = load("b", "p", "pb");
    Load c = load("c", "q", "qc");
    table.add(a);
    table.add(b);
    table.add(c);

    assertThat(table.from("p")).isEqualTo(2);
    assertThat(table.from("q")).isEqualTo(1);

    table.remove(a);
    assertThat(table.from("p")).isEqualTo(1);

    table.remove(b);
    table.remove(c);
    assertThat(table.from("p")).isZero();
    assertThat(table.from("q")).isZero();
    assertThat(table.size()).isZero();
  }

  @Test
  void knowsWhichLeasesAreRead() {
    Load a = load("a", "p", "pa");
    table.add(a);

    assertThat(table.reads(a.key)).isTrue();
    assertThat(table.reads(new Load.LeaseKey("p", "other"))).isFalse();

    table.remove(a);
    assertThat(table.reads(a.key)).isFalse();
  }
}
