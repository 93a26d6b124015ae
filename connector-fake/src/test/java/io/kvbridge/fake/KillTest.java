package io.kvbridge.fake;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.tck.faults.Faults;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.TransferHandle;
import io.kvbridge.transfer.TransferStatus;
import io.kvbridge.transfer.Transport;
import io.kvbridge.transfer.TransportException;
import java.util.ArrayDeque;
import java.util.Queue;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The fault decorator's killed agents, over fake agents that copy inside {@code post}. */
class KillTest {

  private final Faults faults = new Faults(7);
  private final TwoAgents agents = TwoAgents.synchronous(faults);

  @AfterEach
  void close() {
    agents.close();
  }

  @Test
  void killedAgentDisappearsFromTheFabric() {
    faults.kill("prefill");

    assertThat(agents.fabric.agentNames()).containsExactly("decode");
  }

  @Test
  void readFromAKilledPeerFails() {
    faults.kill("prefill");

    TransferHandle handle = agents.read(1);

    assertThat(agents.decode.status(handle))
        .isEqualTo(new TransferStatus.Failed("peer prefill is dead"));
    assertThat(agents.decodeBytes()).containsOnly(0);
  }

  @Test
  void killedAgentCannotPost() {
    faults.kill("decode");

    assertThatThrownBy(() -> agents.read(1))
        .isInstanceOf(TransportException.class)
        .hasMessageContaining("was killed");
  }

  @Test
  void killedAgentFailsEveryCall() {
    faults.kill("decode");

    assertThatThrownBy(() -> agents.decode.drainNotifications())
        .isInstanceOf(TransportException.class)
        .hasMessageContaining("'decode' was killed");
    assertThatThrownBy(() -> agents.decode.notify("prefill", new byte[] {1}))
        .isInstanceOf(TransportException.class);
    assertThat(agents.prefill.drainNotifications()).isEmpty();
  }

  @Test
  void readInFlightFailsWhenItsPeerIsKilled() {
    Queue<Runnable> copies = new ArrayDeque<>();
    Faults group = new Faults(7);
    try (TwoAgents queued = new TwoAgents(new FakeFabric(copies::add), group::decorate)) {
      TransferHandle handle = queued.read(1);

      group.kill("prefill");
      copies.forEach(Runnable::run);

      assertThat(queued.decode.status(handle)).isInstanceOf(TransferStatus.Failed.class);
      assertThat(queued.decodeBytes()).containsOnly(0);
    }
  }

  @Test
  void notificationsToAKilledAgentVanishWithoutError() {
    faults.kill("prefill");

    assertThatCode(() -> agents.decode.notify("prefill", new byte[] {1}))
        .doesNotThrowAnyException();
    assertThat(faults.quiet()).isTrue();
  }

  @Test
  void notificationsWaitingForAKilledAgentAreLost() {
    agents.decode.notify("prefill", new byte[] {1});

    faults.kill("prefill");

    try (Transport successor = faults.decorate(agents.fabric.join("prefill"))) {
      assertThat(successor.drainNotifications()).isEmpty();
      assertThat(faults.quiet()).isTrue();
    }
  }

  @Test
  void successorWithTheSameNameIsUnreachableUntilItsMetadataIsLoaded() {
    faults.kill("prefill");
    try (Transport successor = faults.decorate(agents.fabric.join("prefill"));
        KvMemory memory = successor.allocate(TwoAgents.REGION)) {
      successor.register(memory);

      agents.decode.notify("prefill", new byte[] {1});

      assertThat(successor.drainNotifications()).isEmpty();
      assertThatThrownBy(() -> agents.read(1)).isInstanceOf(TransportException.class);
    }
  }

  @Test
  void killingAnUnknownAgentNamesTheLivingOnes() {
    assertThatThrownBy(() -> faults.kill("nobody"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("no live agent 'nobody'")
        .hasMessageContaining("[decode, prefill]");
  }
}
