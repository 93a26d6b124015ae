package io.kvbridge.fake;

import io.kvbridge.tck.faults.Faults;
import io.kvbridge.transfer.Descriptor;
import io.kvbridge.transfer.DescriptorList;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.Notification;
import io.kvbridge.transfer.TransferHandle;
import io.kvbridge.transfer.TransferOp;
import io.kvbridge.transfer.Transport;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.function.UnaryOperator;

/**
 * A decode agent and a prefill agent on one fabric, each with a registered region of {@link
 * #BLOCKS} blocks, each knowing the other. The prefill region starts out filled with seeded random
 * bytes, the decode region with zeros. The agents may be wrapped, e.g. by a fault decorator.
 */
final class TwoAgents implements AutoCloseable {

  static final int BLOCK = 64;
  static final int BLOCKS = 8;
  static final int REGION = BLOCK * BLOCKS;

  final FakeFabric fabric;
  final Transport decode;
  final Transport prefill;
  final KvMemory decodeMemory;
  final KvMemory prefillMemory;
  final byte[] prefillData = new byte[REGION];

  /** Two agents on {@code fabric}, named {@code decode} and {@code prefill}. */
  TwoAgents(FakeFabric fabric) {
    this(fabric, UnaryOperator.identity());
  }

  /** Two agents on {@code fabric}, each wrapped by {@code wrapper} as soon as it joined. */
  TwoAgents(FakeFabric fabric, UnaryOperator<Transport> wrapper) {
    this.fabric = fabric;
    this.decode = wrapper.apply(fabric.join("decode"));
    this.prefill = wrapper.apply(fabric.join("prefill"));
    this.decodeMemory = decode.allocate(REGION);
    this.prefillMemory = prefill.allocate(REGION);
    decode.register(decodeMemory);
    prefill.register(prefillMemory);
    decode.loadRemoteMetadata(prefill.localMetadata());
    prefill.loadRemoteMetadata(decode.localMetadata());
    new Random(7).nextBytes(prefillData);
    prefillMemory.write(0, ByteBuffer.wrap(prefillData));
  }

  /** Two agents on a fabric that copies inside {@code post}. */
  static TwoAgents synchronous() {
    return new TwoAgents(new FakeFabric(Runnable::run));
  }

  /** Two agents on a fabric that copies inside {@code post}, both members of {@code faults}. */
  static TwoAgents synchronous(Faults faults) {
    return new TwoAgents(new FakeFabric(Runnable::run), faults::decorate);
  }

  /** Decode reads prefill's blocks {@code 0..count-1} into its own blocks {@code 0..count-1}. */
  TransferHandle read(int count) {
    return read(count, Optional.empty());
  }

  TransferHandle read(int count, Optional<byte[]> notification) {
    return decode.post(
        TransferOp.READ,
        blocks(decodeMemory, count),
        "prefill",
        blocks(prefillMemory, count),
        notification);
  }

  /** Prefill reads decode's blocks {@code 0..count-1} into its own blocks {@code 0..count-1}. */
  TransferHandle readByPrefill(int count) {
    return prefill.post(
        TransferOp.READ,
        blocks(prefillMemory, count),
        "decode",
        blocks(decodeMemory, count),
        Optional.empty());
  }

  /** Decode writes its blocks {@code 0..count-1} into prefill's. */
  TransferHandle write(int count) {
    return decode.post(
        TransferOp.WRITE,
        blocks(decodeMemory, count),
        "prefill",
        blocks(prefillMemory, count),
        Optional.empty());
  }

  byte[] decodeBytes() {
    return contents(decodeMemory);
  }

  byte[] prefillBytes() {
    return contents(prefillMemory);
  }

  /** Decode's drained notifications' payloads' first bytes. */
  static List<Byte> firstBytes(List<Notification> drained) {
    List<Byte> out = new ArrayList<>();
    for (Notification n : drained) {
      out.add(n.payload()[0]);
    }
    return out;
  }

  static byte[] contents(KvMemory memory) {
    ByteBuffer dst = ByteBuffer.allocate((int) memory.sizeBytes());
    memory.read(0, dst);
    return dst.array();
  }

  static DescriptorList blocks(KvMemory memory, int count) {
    List<Descriptor> pieces = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      pieces.add(new Descriptor(memory.address() + (long) i * BLOCK, BLOCK, 0));
    }
    return new DescriptorList(memory.kind(), pieces);
  }

  @Override
  public void close() {
    decode.close();
    prefill.close();
    decodeMemory.close();
    prefillMemory.close();
  }
}
