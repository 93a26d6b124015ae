package io.kvbridge.fake;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.tck.faults.Faults;
import io.kvbridge.transfer.Descriptor;
import io.kvbridge.transfer.DescriptorList;
import io.kvbridge.transfer.ForwardingTransport;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.MemoryKind;
import io.kvbridge.transfer.PreparedList;
import io.kvbridge.transfer.TransferHandle;
import io.kvbridge.transfer.TransferOp;
import io.kvbridge.transfer.TransferStatus;
import io.kvbridge.transfer.Transport;
import io.kvbridge.transfer.TransportException;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** What a fault group takes in, and what its members still check as every agent does. */
class FaultGroupMembershipTest {

  private final FakeFabric fabric = new FakeFabric(Runnable::run);
  private final Faults faults = new Faults(7);

  @Test
  void anAgentAlreadyUsedCannotJoinAGroup() {
    try (Transport used = fabric.join("used");
        KvMemory memory = used.allocate(64)) {
      used.register(memory);

      assertThatThrownBy(() -> faults.decorate(used))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("decorate its backend before using the agent");
    }
  }

  @Test
  void onlyAnAgentCoreCanJoinAGroup() {
    try (Transport raw = fabric.join("raw")) {
      Transport wrapped = new ForwardingTransport(raw) {};

      assertThatThrownBy(() -> faults.decorate(wrapped))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("only an AgentCore");
    }
  }

  @Test
  void theAgentHandedToTheGroupIsClosedAndItsMemberLivesOn() {
    Transport original = fabric.join("member");
    try (Transport member = faults.decorate(original)) {
      assertThatThrownBy(() -> original.allocate(64)).isInstanceOf(TransportException.class);
      assertThat(member.agentName()).isEqualTo("member");
      assertThat(fabric.agentNames()).containsExactly("member");
    }
    assertThat(fabric.agentNames()).isEmpty();
  }

  @Test
  void aMemberRefusesMemoryOutsideItsRegistrationsBeforeAnyRuleFires() {
    try (TwoAgents agents = new TwoAgents(fabric, faults::decorate)) {
      faults.failNextReads(1, "injected");

      assertThatThrownBy(
              () ->
                  agents.decode.post(
                      TransferOp.READ,
                      new DescriptorList(
                          MemoryKind.DRAM,
                          List.of(
                              new Descriptor(
                                  agents.decodeMemory.address() + TwoAgents.REGION, 64, 0))),
                      "prefill",
                      TwoAgents.blocks(agents.prefillMemory, 1),
                      Optional.empty()))
          .isInstanceOf(TransportException.class)
          .hasMessageContaining("lies outside the memory registered with agent decode");
      // The rule was not used up by the refused post.
      assertThat(agents.decode.status(agents.read(1)))
          .isEqualTo(new TransferStatus.Failed("injected"));
    }
  }

  @Test
  void aStalledReadFromListsReleasedMeanwhileFailsWhenUnstalled() {
    try (TwoAgents agents = new TwoAgents(fabric, faults::decorate)) {
      PreparedList local = agents.decode.prepare(TwoAgents.blocks(agents.decodeMemory, 1));
      PreparedList remote =
          agents.decode.prepare("prefill", TwoAgents.blocks(agents.prefillMemory, 1));
      faults.stallNextReads(1);
      TransferHandle handle =
          agents.decode.post(
              TransferOp.READ, local, new int[] {0}, remote, new int[] {0}, Optional.empty());
      agents.decode.release(local);

      assertThat(faults.unstallReads()).isEqualTo(1);

      assertThat(agents.decode.status(handle)).isInstanceOf(TransferStatus.Failed.class);
      assertThat(agents.decodeBytes()).containsOnly(0);
    }
  }
}
