package io.kvbridge.nixl;

import io.kvbridge.nixl.capi.NixlLibrary;
import io.kvbridge.nixl.memory.CudaRuntime;
import io.kvbridge.transfer.Descriptor;
import io.kvbridge.transfer.DescriptorList;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.MemoryKind;
import io.kvbridge.transfer.Notification;
import io.kvbridge.transfer.TransferHandle;
import io.kvbridge.transfer.TransferOp;
import io.kvbridge.transfer.TransferStatus;
import io.kvbridge.transfer.Transport;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.SplittableRandom;

/**
 * Checks VRAM-to-VRAM transfers through NIXL on a machine with an NVIDIA GPU: two agents in one
 * JVM, each with a device buffer from the cuda preset, move blocks both ways with notifications and
 * compare every byte; then the bandwidth of READs is printed for a few block sizes.
 *
 * <p>Run by {@code src/test/gpu/gpu-check.sh}. Exit status 0: every check passed; 1: a check
 * failed; 2: NIXL or the GPU is not usable here.
 */
public final class GpuTransferCheck {

  private static final long MIB = 1L << 20;
  private static final long REGION = 256 * MIB;
  private static final long CHUNK = 16 * MIB;
  private static final long TIMEOUT_NANOS = 30_000_000_000L;

  private int failures;

  private GpuTransferCheck() {}

  /**
   * Runs the checks. Arguments: optionally {@code vram} (default) or {@code dram}, then optionally
   * block sizes in bytes (default 4 KiB, 64 KiB, 1 MiB, 16 MiB).
   */
  public static void main(String[] args) {
    System.exit(new GpuTransferCheck().run(args));
  }

  private int run(String[] args) {
    System.out.println("java " + System.getProperty("java.version"));
    NixlLibrary.Outcome nixl = NixlLibrary.probe();
    System.out.println("NIXL: " + nixl);
    CudaRuntime.Probe cuda = CudaRuntime.probe();
    System.out.println("CUDA: " + CudaRuntime.describe(cuda));
    MemoryMode mode = MemoryMode.VRAM;
    if (args.length > 0 && !Character.isDigit(args[0].charAt(0))) {
      mode = MemoryMode.parse("memory argument", args[0]);
      args = Arrays.copyOfRange(args, 1, args.length);
    }
    MemoryKind kind = mode == MemoryMode.DRAM ? MemoryKind.DRAM : MemoryKind.VRAM;
    if (nixl instanceof NixlLibrary.Failed || (kind == MemoryKind.VRAM && !cuda.usable())) {
      if (cuda instanceof CudaRuntime.Unusable u && u.cause().isPresent()) {
        u.cause().get().printStackTrace(System.out);
      }
      System.out.println("GPU CHECK NOT RUN: NIXL or the GPU is not usable here");
      return 2;
    }
    long[] sizes =
        args.length > 0
            ? Arrays.stream(args).mapToLong(Long::parseLong).toArray()
            : new long[] {4096, 64 * 1024, MIB, 16 * MIB};
    NixlOptions options = NixlOptions.defaults().withMemory(mode);
    System.out.println("memory: " + kind);
    try {
      NixlTransport a = NixlTransport.create("gpu-check-a", options);
      NixlTransport b = NixlTransport.create("gpu-check-b", options);
      KvMemory ma = a.allocate(REGION);
      KvMemory mb = b.allocate(REGION);
      try {
        check("memory kind " + kind, ma.kind() == kind && mb.kind() == kind, ma);
        a.register(ma);
        b.register(mb);
        check("load b into a", a.loadRemoteMetadata(b.localMetadata()).equals("gpu-check-b"), "");
        check("load a into b", b.loadRemoteMetadata(a.localMetadata()).equals("gpu-check-a"), "");
        fill(ma, 1);
        fill(mb, 2);

        readReversedBlocks(a, ma, b, mb);
        writeWithNotification(a, ma, b, mb);
        oddPieces(a, ma, mb);
        bandwidth(a, ma, mb, sizes);
      } finally {
        // Memory is freed only after the agents forgot it.
        b.close();
        a.close();
        mb.close();
        ma.close();
      }
    } catch (RuntimeException e) {
      e.printStackTrace(System.out);
      failures++;
    }
    System.out.println(
        failures == 0 ? "GPU CHECK OK" : "GPU CHECK FAILED: " + failures + " failure(s)");
    return failures == 0 ? 0 : 1;
  }

  /** A READs 64 blocks of 1 MiB from B in reverse order, with a notification to B. */
  private void readReversedBlocks(Transport a, KvMemory ma, Transport b, KvMemory mb) {
    int n = 64;
    long block = MIB;
    List<Descriptor> local = new ArrayList<>();
    List<Descriptor> remote = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      local.add(new Descriptor(ma.address() + i * block, block, ma.deviceId()));
      remote.add(new Descriptor(mb.address() + (n - 1 - i) * block, block, mb.deviceId()));
    }
    byte[] tag = {'r', 0, 'd'};
    TransferHandle h =
        a.post(
            TransferOp.READ,
            new DescriptorList(ma.kind(), local),
            "gpu-check-b",
            new DescriptorList(ma.kind(), remote),
            Optional.of(tag));
    check("READ 64 x 1 MiB settles DONE", awaitDone(a, h), "");
    a.release(h);
    boolean same = true;
    for (int i = 0; i < n && same; i++) {
      same = Arrays.equals(read(ma, i * block, block), read(mb, (n - 1 - i) * block, block));
    }
    check("READ 64 x 1 MiB byte-exact (reversed block order)", same, "");
    check(
        "READ notification reaches b naming a",
        awaitNotification(b).equals(new Notification("gpu-check-a", tag)),
        "");
  }

  /** A WRITEs 8 blocks of 4 MiB into B at other offsets, with a notification. */
  private void writeWithNotification(Transport a, KvMemory ma, Transport b, KvMemory mb) {
    long block = 4 * MIB;
    List<Descriptor> local = new ArrayList<>();
    List<Descriptor> remote = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      local.add(new Descriptor(ma.address() + (8 + i) * block, block, ma.deviceId()));
      remote.add(new Descriptor(mb.address() + (40 + i) * block, block, mb.deviceId()));
    }
    byte[] tag = "write-done".getBytes();
    TransferHandle h =
        a.post(
            TransferOp.WRITE,
            new DescriptorList(ma.kind(), local),
            "gpu-check-b",
            new DescriptorList(ma.kind(), remote),
            Optional.of(tag));
    Notification arrived = awaitNotification(b);
    check(
        "WRITE notification reaches b naming a",
        arrived.equals(new Notification("gpu-check-a", tag)),
        "");
    boolean same = true;
    for (int i = 0; i < 8 && same; i++) {
      same = Arrays.equals(read(ma, (8 + i) * block, block), read(mb, (40 + i) * block, block));
    }
    check("WRITE 8 x 4 MiB byte-exact when its notification arrives", same, "");
    check("WRITE settles DONE", awaitDone(a, h), "");
    a.release(h);
  }

  /** Pieces smaller than a block at odd offsets. */
  private void oddPieces(Transport a, KvMemory ma, KvMemory mb) {
    TransferHandle h =
        a.post(
            TransferOp.READ,
            new DescriptorList(
                ma.kind(),
                List.of(
                    new Descriptor(ma.address() + 200 * MIB + 1, 3, ma.deviceId()),
                    new Descriptor(ma.address() + 200 * MIB + 1000, 77, ma.deviceId()))),
            "gpu-check-b",
            new DescriptorList(
                mb.kind(),
                List.of(
                    new Descriptor(mb.address() + 2001, 3, mb.deviceId()),
                    new Descriptor(mb.address() + 13, 77, mb.deviceId()))),
            Optional.empty());
    check("odd pieces settle DONE", awaitDone(a, h), "");
    a.release(h);
    check(
        "odd pieces byte-exact",
        Arrays.equals(read(ma, 200 * MIB + 1, 3), read(mb, 2001, 3))
            && Arrays.equals(read(ma, 200 * MIB + 1000, 77), read(mb, 13, 77)),
        "");
  }

  private void bandwidth(Transport a, KvMemory ma, KvMemory mb, long[] sizes) {
    System.out.println();
    System.out.println(
        "READ bandwidth, "
            + ma.kind()
            + " -> "
            + mb.kind()
            + ", one transfer of N descriptors at a time:");
    System.out.printf(
        Locale.ROOT,
        "%12s %6s %12s %8s %12s %12s%n",
        "block",
        "N",
        "bytes",
        "iters",
        "median us",
        "GB/s");
    for (long size : sizes) {
      int n = (int) Math.min(256, REGION / size);
      List<Descriptor> local = new ArrayList<>();
      List<Descriptor> remote = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        local.add(new Descriptor(ma.address() + i * size, size, ma.deviceId()));
        remote.add(new Descriptor(mb.address() + i * size, size, mb.deviceId()));
      }
      DescriptorList l = new DescriptorList(ma.kind(), local);
      DescriptorList r = new DescriptorList(ma.kind(), remote);
      List<Long> times = new ArrayList<>();
      long started = System.nanoTime();
      for (int iter = 0; iter < 200 && (iter < 8 || System.nanoTime() - started < 2e9); iter++) {
        long t0 = System.nanoTime();
        TransferHandle h = a.post(TransferOp.READ, l, "gpu-check-b", r, Optional.empty());
        if (!awaitDone(a, h)) {
          check("bandwidth transfer of " + size + " settles DONE", false, "");
          return;
        }
        long t1 = System.nanoTime();
        a.release(h);
        if (iter >= 3) {
          times.add(t1 - t0);
        }
      }
      times.sort(null);
      long median = times.get(times.size() / 2);
      double gbps = (double) l.totalBytes() / median;
      System.out.printf(
          Locale.ROOT,
          "%12d %6d %12d %8d %12.1f %12.2f%n",
          size,
          n,
          l.totalBytes(),
          times.size(),
          median / 1000.0,
          gbps);
    }
    check(
        "bandwidth pass left the last block byte-exact",
        Arrays.equals(read(ma, 0, MIB), read(mb, 0, MIB)),
        "");
  }

  private boolean awaitDone(Transport t, TransferHandle h) {
    long deadline = System.nanoTime() + TIMEOUT_NANOS;
    while (System.nanoTime() < deadline) {
      TransferStatus s = t.status(h);
      if (s instanceof TransferStatus.Done) {
        return true;
      }
      if (s instanceof TransferStatus.Failed f) {
        System.out.println("  transfer failed: " + f.reason());
        return false;
      }
      Thread.onSpinWait();
    }
    System.out.println("  transfer still in progress after 30 s");
    return false;
  }

  private static Notification awaitNotification(Transport t) {
    long deadline = System.nanoTime() + TIMEOUT_NANOS;
    while (System.nanoTime() < deadline) {
      List<Notification> got = t.drainNotifications();
      if (!got.isEmpty()) {
        return got.get(0);
      }
      Thread.onSpinWait();
    }
    return new Notification("(none within 30 s)", new byte[0]);
  }

  private void check(String what, boolean ok, Object detail) {
    System.out.println((ok ? "PASS " : "FAIL ") + what + (ok ? "" : " " + detail));
    if (!ok) {
      failures++;
    }
  }

  private static void fill(KvMemory memory, long seed) {
    for (long off = 0; off < memory.sizeBytes(); off += CHUNK) {
      SplittableRandom random = new SplittableRandom(seed * 1_000_003L + off);
      ByteBuffer chunk = ByteBuffer.allocate((int) CHUNK);
      while (chunk.hasRemaining()) {
        chunk.putLong(random.nextLong());
      }
      chunk.flip();
      memory.write(off, chunk);
    }
  }

  private static byte[] read(KvMemory memory, long offset, long length) {
    ByteBuffer dst = ByteBuffer.allocate((int) length);
    memory.read(offset, dst);
    return dst.array();
  }
}
