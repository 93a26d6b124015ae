package io.kvbridge.tck.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.tck.ConnectorUnderTest;
import io.kvbridge.transfer.Descriptor;
import io.kvbridge.transfer.DescriptorList;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.MemoryKind;
import io.kvbridge.transfer.TransferOp;
import io.kvbridge.transfer.TransportException;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Descriptors outside what is registered, on either side, are refused before any byte moves. */
public abstract class DescriptorBoundsConformance extends TransportFixture {

  /** These tests, run against {@code connector}. */
  protected DescriptorBoundsConformance(ConnectorUnderTest connector) {
    super(connector);
  }

  @Test
  void localDescriptorOutsideRegisteredMemoryIsRefusedBeforeAnyByteMoves() {
    Pair pair = connectedPair();
    fill(pair.targetMemory(), 0, randomBytes(REGION_BYTES));
    byte[] before = randomBytes(REGION_BYTES);
    fill(pair.initiatorMemory(), 0, before);
    KvMemory local = pair.initiatorMemory();

    assertThatThrownBy(
            () ->
                pair.initiator()
                    .post(
                        TransferOp.READ,
                        new DescriptorList(
                            local.kind(), List.of(piece(local, 0), pastTheEnd(local, 0))),
                        "target",
                        blocks(pair.targetMemory(), 1, 2),
                        Optional.empty()))
        .isInstanceOf(TransportException.class);
    assertThat(contents(local, 0, REGION_BYTES)).isEqualTo(before);
  }

  @Test
  void remoteDescriptorOutsideRegisteredMemoryIsRefusedBeforeAnyByteMoves() {
    Pair pair = connectedPair();
    fill(pair.initiatorMemory(), 0, randomBytes(REGION_BYTES));
    byte[] before = randomBytes(REGION_BYTES);
    fill(pair.targetMemory(), 0, before);
    KvMemory remote = pair.targetMemory();

    assertThatThrownBy(
            () ->
                pair.initiator()
                    .post(
                        TransferOp.WRITE,
                        blocks(pair.initiatorMemory(), 1, 2),
                        "target",
                        new DescriptorList(
                            remote.kind(), List.of(piece(remote, 0), pastTheEnd(remote, 0))),
                        Optional.empty()))
        .isInstanceOf(TransportException.class);
    assertThat(contents(remote, 0, REGION_BYTES)).isEqualTo(before);
  }

  @Test
  void descriptorStraddlingTheEndOfARegionIsRefused() {
    Pair pair = connectedPair();
    KvMemory local = pair.initiatorMemory();
    Descriptor straddling =
        new Descriptor(
            local.address() + REGION_BYTES - BLOCK_BYTES / 2, BLOCK_BYTES, local.deviceId());

    assertThatThrownBy(
            () ->
                pair.initiator()
                    .post(
                        TransferOp.READ,
                        new DescriptorList(local.kind(), List.of(straddling)),
                        "target",
                        blocks(pair.targetMemory(), 0),
                        Optional.empty()))
        .isInstanceOf(TransportException.class);
  }

  @Test
  void descriptorBeforeTheStartOfARegionIsRefused() {
    Pair pair = connectedPair();
    KvMemory remote = pair.targetMemory();
    Descriptor before = new Descriptor(remote.address() - 1, BLOCK_BYTES, remote.deviceId());

    assertThatThrownBy(
            () ->
                pair.initiator()
                    .post(
                        TransferOp.READ,
                        blocks(pair.initiatorMemory(), 0),
                        "target",
                        new DescriptorList(remote.kind(), List.of(before)),
                        Optional.empty()))
        .isInstanceOf(TransportException.class);
  }

  @Test
  void localMemoryThatWasNeverRegisteredIsRefused() {
    Pair pair = connectedPair();
    KvMemory unregistered = allocate(pair.initiator());
    byte[] before = randomBytes(REGION_BYTES);
    fill(unregistered, 0, before);

    assertThatThrownBy(
            () ->
                pair.initiator()
                    .post(
                        TransferOp.READ,
                        blocks(unregistered, 0),
                        "target",
                        blocks(pair.targetMemory(), 0),
                        Optional.empty()))
        .isInstanceOf(TransportException.class);
    assertThat(contents(unregistered, 0, REGION_BYTES)).isEqualTo(before);
  }

  @Test
  void deregisteredLocalMemoryIsRefused() {
    Pair pair = connectedPair();
    pair.initiator().deregister(pair.initiatorMemory());

    assertAReadFromTargetIsRefused(pair.initiator(), pair.initiatorMemory(), pair.targetMemory());
  }

  @Test
  void remoteMemoryDeregisteredBeforeItsMetadataWasReloadedIsRefused() {
    Pair pair = connectedPair();
    pair.target().deregister(pair.targetMemory());
    pair.initiator().loadRemoteMetadata(pair.target().localMetadata());

    assertAReadFromTargetIsRefused(pair.initiator(), pair.initiatorMemory(), pair.targetMemory());
  }

  @Test
  void descriptorsOfAnotherMemoryKindAreRefused() {
    Pair pair = connectedPair();
    KvMemory local = pair.initiatorMemory();
    MemoryKind other = local.kind() == MemoryKind.DRAM ? MemoryKind.VRAM : MemoryKind.DRAM;

    assertThatThrownBy(
            () ->
                pair.initiator()
                    .post(
                        TransferOp.READ,
                        new DescriptorList(other, List.of(piece(local, 0))),
                        "target",
                        blocks(pair.targetMemory(), 0),
                        Optional.empty()))
        .isInstanceOf(TransportException.class);
  }
}
