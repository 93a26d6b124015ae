package io.kvbridge.fake;

import io.kvbridge.transfer.Descriptor;
import io.kvbridge.transfer.DescriptorList;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.MemoryKind;
import io.kvbridge.transfer.TransferHandle;
import io.kvbridge.transfer.TransferOp;
import io.kvbridge.transfer.TransferStatus;
import io.kvbridge.transfer.Transport;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The other process of {@link CrossProcessTest}: joins the shared directory as {@code child},
 * publishes its metadata, reads the parent's first half into its own memory, writes it back into
 * the parent's second half with a {@code done} notification, and then waits to be killed.
 *
 * <p>Arguments: the shared directory and the base address of the parent's region.
 */
public final class SharedDirectoryPeer {

  static final int BLOCK = 64;
  static final int BLOCKS = 8;

  private SharedDirectoryPeer() {}

  /** Runs the peer; see the class comment for the arguments. */
  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    Transport child = FakeFabric.sharedDirectory(dir).join("child");
    KvMemory memory = child.allocate(BLOCK * BLOCKS);
    child.register(memory);
    Path tmp = dir.resolve("child.meta.tmp");
    Files.write(tmp, child.localMetadata());
    Files.move(tmp, dir.resolve("child.meta"), StandardCopyOption.ATOMIC_MOVE);

    // The parent published its metadata before it started this process.
    String parent = child.loadRemoteMetadata(Files.readAllBytes(dir.resolve("parent.meta")));
    long parentBase = Long.parseLong(args[1]);

    awaitDone(
        child,
        child.post(
            TransferOp.READ,
            blocks(memory.address(), 0, 4),
            parent,
            blocks(parentBase, 0, 4),
            Optional.empty()));
    awaitDone(
        child,
        child.post(
            TransferOp.WRITE,
            blocks(memory.address(), 0, 4),
            parent,
            blocks(parentBase, 4, 4),
            Optional.of("done".getBytes(StandardCharsets.US_ASCII))));

    // Stay alive, holding the agent, until the parent kills this process.
    Thread.currentThread().join();
  }

  private static void awaitDone(Transport t, TransferHandle handle) {
    TransferStatus status;
    do {
      status = t.status(handle);
    } while (status instanceof TransferStatus.InProgress);
    if (!(status instanceof TransferStatus.Done)) {
      throw new IllegalStateException("transfer ended " + status);
    }
    t.release(handle);
  }

  private static DescriptorList blocks(long base, int first, int count) {
    List<Descriptor> pieces = new ArrayList<>();
    for (int i = first; i < first + count; i++) {
      pieces.add(new Descriptor(base + (long) i * BLOCK, BLOCK, 0));
    }
    return new DescriptorList(MemoryKind.DRAM, pieces);
  }
}
