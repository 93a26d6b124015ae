package io.kvbridge.fake;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.TransferHandle;
import io.kvbridge.transfer.TransferStatus;
import io.kvbridge.transfer.TransportException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class KillTest {

  private final TwoAgents agents = TwoAgents.synchronous();
  private final FakeFaults faults = agents.faults();

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
  void readFromAKilledPeerIsRefused() {
    faults.kill("prefill");

    assertThatThrownBy(() -> agents.read(1))
        .isInstanceOf(TransportException.class)
        .hasMessageContaining("prefill is not reachable");
  }

  @Test
  void killedAgentCannotPost() {
    faults.kill("decode");

    assertThatThrownBy(() -> agents.read(1))
        .isInstanceOf(TransportException.class)
        .hasMessageContaining("was killed");
  }

  @Test
  void transferInFlightFailsWhenItsInitiatorIsKilled() {
    faults.stallNextReads(1);
    TransferHandle handle = agents.read(1);

    faults.kill("decode");

    assertThat(agents.decode.status(handle)).isInstanceOf(TransferStatus.Failed.class);
  }

  @Test
  void notificationsToAKilledAgentVanishWithoutError() {
    faults.kill("prefill");

    assertThatCode(() -> agents.decode.notify("prefill", new byte[] {1}))
        .doesNotThrowAnyException();
    assertThat(agents.prefill.drainNotifications()).isEmpty();
  }

  @Test
  void notificationsFromAKilledAgentVanish() {
    faults.kill("prefill");

    agents.prefill.notify("decode", new byte[] {1});

    assertThat(agents.decode.drainNotifications()).isEmpty();
  }

  @Test
  void notificationsWaitingForAKilledAgentAreLost() {
    agents.decode.notify("prefill", new byte[] {1});

    faults.kill("prefill");

    assertThat(agents.prefill.drainNotifications()).isEmpty();
  }

  @Test
  void successorWithTheSameNameIsUnreachableUntilItsMetadataIsLoaded() {
    faults.kill("prefill");
    try (FakeTransport successor = agents.fabric.join("prefill");
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
        .hasMessageContaining("no agent 'nobody'")
        .hasMessageContaining("[decode, prefill]");
  }
}
