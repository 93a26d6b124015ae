package io.kvbridge.runtime.consumer;

import static io.kvbridge.runtime.consumer.TestLoads.oneBlock;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class LoadTableTest {

  private final LoadTable table = new LoadTable();

  @Test
  void countsLoadsPerProducerAsTheyComeAndGo() {
    Load a = oneBlock("a", "p", "pa");
    Load b = oneBlock("b", "p", "pb");
    Load c = oneBlock("c", "q", "qc");
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
    Load a = oneBlock("a", "p", "pa");
    table.add(a);

    assertThat(table.reads(a.key())).isTrue();
    assertThat(table.reads(new Load.LeaseKey("p", "other"))).isFalse();

    table.remove(a);
    assertThat(table.reads(a.key())).isFalse();
  }
}
