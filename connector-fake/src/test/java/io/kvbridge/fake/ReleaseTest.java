package io.kvbridge.fake;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.transfer.Descriptor;
import io.kvbridge.transfer.DescriptorList;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.TransferHandle;
import io.kvbridge.transfer.TransferOp;
import io.kvbridge.transfer.Transport;
import io.kvbridge.transfer.TransportException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Releasing a transfer that is still moving bytes stops it for good. */
class ReleaseTest {

  @Test
  void transferReleasedBeforeItsCopyRanWritesNothing() {
    Queue<Runnable> queued = new ArrayDeque<>();
    try (TwoAgents agents = new TwoAgents(new FakeFabric(queued::add))) {
      TransferHandle handle = agents.read(4, Optional.of(new byte[] {1}));

      agents.decode.release(handle);
      queued.forEach(Runnable::run);

      assertThat(agents.decodeBytes()).containsOnly(0);
      assertThat(agents.prefill.drainNotifications()).isEmpty();
    }
  }

  @Test
  void noByteIsWrittenAfterReleaseReturns() throws Exception {
    ExecutorService copier = Executors.newSingleThreadExecutor();
    FakeFabric fabric = new FakeFabric(copier);
    int pieces = 4096;
    int pieceBytes = 64;
    try (Transport decode = fabric.join("decode");
        Transport prefill = fabric.join("prefill");
        KvMemory local = decode.allocate((long) pieces * pieceBytes);
        KvMemory remote = prefill.allocate((long) pieces * pieceBytes)) {
      decode.register(local);
      prefill.register(remote);
      decode.loadRemoteMetadata(prefill.localMetadata());
      byte[] data = new byte[pieces * pieceBytes];
      new Random(3).nextBytes(data);
      remote.write(0, ByteBuffer.wrap(data));

      for (int round = 0; round < 20; round++) {
        byte[] zeros = new byte[pieces * pieceBytes];
        local.write(0, ByteBuffer.wrap(zeros));
        TransferHandle handle =
            decode.post(
                TransferOp.READ,
                pieces(local, pieces, pieceBytes),
                "prefill",
                pieces(remote, pieces, pieceBytes),
                Optional.empty());

        decode.release(handle);
        byte[] atRelease = TwoAgents.contents(local);
        // Let every queued copy finish: whatever they still do must not touch the memory.
        copier.submit(() -> {}).get(10, TimeUnit.SECONDS);

        assertThat(TwoAgents.contents(local)).as("round %d", round).isEqualTo(atRelease);
      }
    } finally {
      copier.shutdownNow();
    }
  }

  @Test
  void releasingTwiceIsRefused() {
    try (TwoAgents agents = TwoAgents.synchronous()) {
      TransferHandle handle = agents.read(1);
      agents.decode.release(handle);

      assertThatThrownBy(() -> agents.decode.release(handle))
          .isInstanceOf(TransportException.class)
          .hasMessageContaining("already released");
    }
  }

  @Test
  void statusOfAReleasedTransferIsRefused() {
    try (TwoAgents agents = TwoAgents.synchronous()) {
      TransferHandle handle = agents.read(1);
      agents.decode.release(handle);

      assertThatThrownBy(() -> agents.decode.status(handle)).isInstanceOf(TransportException.class);
    }
  }

  @Test
  void closingCancelsTransfersInFlight() {
    Queue<Runnable> queued = new ArrayDeque<>();
    try (TwoAgents agents = new TwoAgents(new FakeFabric(queued::add))) {
      agents.read(4);

      agents.decode.close();
      queued.forEach(Runnable::run);

      assertThat(agents.decodeBytes()).containsOnly(0);
    }
  }

  private static DescriptorList pieces(KvMemory memory, int count, int bytes) {
    List<Descriptor> out = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      out.add(new Descriptor(memory.address() + (long) i * bytes, bytes, 0));
    }
    return new DescriptorList(memory.kind(), out);
  }
}
