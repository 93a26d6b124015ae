package io.kvbridge.fake;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.Transport;
import io.kvbridge.transfer.TransportException;
import org.junit.jupiter.api.Test;

class FakeFabricTest {

  private final FakeFabric fabric = new FakeFabric();

  @Test
  void agentNamesAreUniquePerFabric() {
    try (Transport first = fabric.join("a")) {
      assertThat(first.agentName()).isEqualTo("a");
      assertThatThrownBy(() -> fabric.join("a"))
          .isInstanceOf(TransportException.class)
          .hasMessageContaining("agent name 'a' is taken");
    }
  }

  @Test
  void theSameNameMayLiveOnTwoFabrics() {
    try (Transport one = fabric.join("a");
        Transport other = new FakeFabric().join("a")) {
      assertThat(other.agentName()).isEqualTo(one.agentName());
    }
  }

  @Test
  void joinUniqueSuffixesATakenName() {
    try (Transport first = fabric.joinUnique("engine");
        Transport second = fabric.joinUnique("engine");
        Transport third = fabric.joinUnique("engine")) {
      assertThat(first.agentName()).isEqualTo("engine");
      assertThat(second.agentName()).isEqualTo("engine-2");
      assertThat(third.agentName()).isEqualTo("engine-3");
    }
  }

  @Test
  void closingAnAgentFreesItsName() {
    fabric.join("a").close();

    try (Transport again = fabric.join("a")) {
      assertThat(again.agentName()).isEqualTo("a");
      assertThat(fabric.agentNames()).containsExactly("a");
    }
  }

  @Test
  void blankAgentNameIsRefused() {
    assertThatThrownBy(() -> fabric.join(" ")).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void regionsOfOneFabricNeverOverlapNorTouch() {
    try (Transport a = fabric.join("a");
        Transport b = fabric.join("b");
        KvMemory first = a.allocate(5000);
        KvMemory second = b.allocate(100);
        KvMemory third = a.allocate(4096)) {
      assertThat(second.address()).isGreaterThan(first.address() + first.sizeBytes());
      assertThat(third.address()).isGreaterThan(second.address() + second.sizeBytes());
    }
  }

  @Test
  void namedFabricIsTheSameInstanceEveryTime() {
    assertThat(FakeFabric.named("fabric-test-x")).isSameAs(FakeFabric.named("fabric-test-x"));
    assertThat(FakeFabric.shared()).isSameAs(FakeFabric.named(FakeFabric.DEFAULT_NAME));
    assertThat(FakeFabric.named("fabric-test-x")).isNotSameAs(FakeFabric.shared());
  }

  @Test
  void anAgentLivesOnTheFabricItJoinedUntilItCloses() {
    Transport a = fabric.join("a");
    assertThat(fabric.agentNames()).containsExactly("a");
    assertThat(new FakeFabric().agentNames()).isEmpty();
    a.close();
    assertThat(fabric.agentNames()).isEmpty();
  }
}
