package io.kvbridge.fake;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.transfer.Descriptor;
import io.kvbridge.transfer.DescriptorList;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.MemoryKind;
import io.kvbridge.transfer.PreparedList;
import io.kvbridge.transfer.TransferStatus;
import io.kvbridge.transfer.Transport;
import io.kvbridge.transfer.TransportException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** What the fake transport does beyond the shared contract. */
class FakeTransportTest {

  private final TwoAgents agents = TwoAgents.synchronous();

  @AfterEach
  void close() {
    agents.close();
  }

  @Test
  void memoryIsHostMemoryOnDeviceZero() {
    assertThat(agents.decode.memoryKind()).isEqualTo(MemoryKind.DRAM);
    assertThat(agents.decodeMemory.kind()).isEqualTo(MemoryKind.DRAM);
    assertThat(agents.decodeMemory.deviceId()).isZero();
  }

  @Test
  void synchronousFabricCompletesTransfersInsidePost() {
    assertThat(agents.decode.status(agents.read(2))).isEqualTo(TransferStatus.DONE);
    assertThat(Arrays.copyOf(agents.decodeBytes(), 2 * TwoAgents.BLOCK))
        .isEqualTo(Arrays.copyOf(agents.prefillData, 2 * TwoAgents.BLOCK));
  }

  @Test
  void aRefusedBlobNamingALoadedPeerLeavesThatPeerReachable() {
    try (Transport namesake = new FakeFabric().join("prefill")) {
      assertThatThrownBy(() -> agents.decode.loadRemoteMetadata(namesake.localMetadata()))
          .isInstanceOf(TransportException.class);

      assertThat(agents.decode.status(agents.read(1))).isEqualTo(TransferStatus.DONE);
    }
  }

  @Test
  void metadataFromAnotherFabricIsRefusedNamingBothFabrics() {
    try (Transport stranger = new FakeFabric().join("stranger")) {
      assertThatThrownBy(() -> agents.decode.loadRemoteMetadata(stranger.localMetadata()))
          .isInstanceOf(TransportException.class)
          .hasMessageContaining("stranger")
          .hasMessageContaining("same fake.fabric");
    }
  }

  @Test
  void memoryOfAnotherFabricCannotBeRegistered() {
    try (Transport stranger = new FakeFabric().join("stranger");
        KvMemory foreign = stranger.allocate(64)) {
      assertThatThrownBy(() -> agents.decode.register(foreign))
          .isInstanceOf(TransportException.class)
          .hasMessageContaining("can register only memory allocated by an agent of fabric");
    }
  }

  @Test
  void memoryAllocatedByOneAgentMayBeRegisteredWithAnotherOfTheSameFabric() {
    try (KvMemory shared = agents.prefill.allocate(64)) {
      DescriptorList whole =
          new DescriptorList(
              shared.kind(), List.of(new Descriptor(shared.address(), 64, shared.deviceId())));
      agents.decode.register(shared);

      PreparedList prepared = agents.decode.prepare(whole);
      assertThat(prepared.size()).isEqualTo(1);
      agents.decode.release(prepared);
      agents.decode.deregister(shared);
      assertThatThrownBy(() -> agents.decode.prepare(whole)).isInstanceOf(TransportException.class);
    }
  }

  @Test
  void registeringTwiceIsRefused() {
    assertThatThrownBy(() -> agents.decode.register(agents.decodeMemory))
        .isInstanceOf(TransportException.class)
        .hasMessageContaining("already registered");
  }

  @Test
  void deregisteringUnregisteredMemoryIsRefused() {
    try (KvMemory other = agents.decode.allocate(64)) {
      assertThatThrownBy(() -> agents.decode.deregister(other))
          .isInstanceOf(TransportException.class)
          .hasMessageContaining("is not registered");
    }
  }

  @Test
  void closedMemoryCannotBeRegistered() {
    KvMemory memory = agents.decode.allocate(64);
    memory.close();

    assertThatThrownBy(() -> agents.decode.register(memory))
        .isInstanceOf(TransportException.class)
        .hasMessageContaining("closed");
  }

  @Test
  void copyIntoMemoryItsOwnerClosedFailsTheTransfer() {
    agents.decodeMemory.close();

    assertThat(agents.decode.status(agents.read(1))).isInstanceOf(TransferStatus.Failed.class);
  }

  @Test
  void memoryAccessOutsideItsBoundsIsRefused() {
    assertThatThrownBy(
            () -> agents.decodeMemory.write(TwoAgents.REGION - 1, ByteBuffer.allocate(2)))
        .isInstanceOf(IndexOutOfBoundsException.class);
  }

  @Test
  void nonPositiveAllocationIsRefused() {
    assertThatThrownBy(() -> agents.decode.allocate(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("got 0");
  }

  @Test
  void oversizedNotificationIsRefused() {
    byte[] big = new byte[FakeFabric.MAX_NOTIFICATION_BYTES + 1];

    assertThatThrownBy(() -> agents.decode.notify("prefill", big))
        .isInstanceOf(TransportException.class)
        .hasMessageContaining("exceeds the limit");
  }

  @Test
  void peerMemoryDeregisteredAfterItsMetadataWasLoadedFailsTheTransfer() {
    agents.prefill.deregister(agents.prefillMemory);

    assertThat(agents.decode.status(agents.read(1)))
        .isInstanceOf(TransferStatus.Failed.class)
        .extracting(s -> ((TransferStatus.Failed) s).reason())
        .asString()
        .contains("reload its metadata");
  }

  @Test
  void drainingAClosedAgentIsRefused() {
    agents.decode.close();

    assertThatThrownBy(agents.decode::drainNotifications).isInstanceOf(TransportException.class);
  }

  @Test
  void refusalNamesTheOffendingDescriptor() {
    agents.decode.deregister(agents.decodeMemory);

    assertThatThrownBy(() -> agents.read(1))
        .hasMessageContaining("local descriptor 0")
        .hasMessageContaining("0x" + Long.toHexString(agents.decodeMemory.address()));
  }
}
