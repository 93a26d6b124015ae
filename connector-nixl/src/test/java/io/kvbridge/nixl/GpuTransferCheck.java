package io.kvbridge.nixl;

import io.kvbridge.nixl.capi.NixlLibrary;
import io.kvbridge.nixl.memory.CudaRuntime;
import io.kvbridge.nixl.memory.DeviceMemory;
import io.kvbridge.spi.ConnectorProperties;
import io.kvbridge.transfer.Descriptor;
import io.kvbridge.transfer.DescriptorList;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.MemoryKind;
import io.kvbridge.transfer.Notification;
import io.kvbridge.transfer.TransferHandle;
import io.kvbridge.transfer.TransferOp;
import io.kvbridge.transfer.TransferStatus;
import io.kvbridge.transfer.Transport;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import org.bytedeco.cuda.global.cudart;
import org.bytedeco.javacpp.Pointer;

/**
 * Checks transfers through NIXL between two agents, each with a buffer of device memory from the
 * cuda preset (or host memory, to compare): blocks move both ways with notifications and every byte
 * is compared; then READ bandwidth is printed for a few block sizes.
 *
 * <p>{@code two} (default) puts the second agent in a child JVM, as prefill and decode engines are
 * separate processes (UCX's CUDA IPC path works only across processes); metadata goes through files
 * and each side checks the other's bytes against a pattern both can regenerate. {@code one} keeps
 * both agents in this JVM.
 *
 * <p>{@code compare} instead measures the GPU path against its floor: per size (64 KiB to 256 MiB
 * by default), one READ of one piece of device memory, VRAM to VRAM, alternating with a {@code
 * cudaMemcpy} device to device of the same bytes in agent a's process (waited for with {@code
 * cudaDeviceSynchronize}); it prints both medians and writes them as JSON to {@code
 * gpu-compare.json} (or the file the {@code kvbridge.gpu.compare-out} system property names), which
 * {@code benchmarks/report.py} reads from a results directory.
 *
 * <p>Run by {@code src/test/gpu/gpu-check.sh}. Arguments: {@code [compare] [one|two] [vram|dram]
 * [block sizes in bytes...]}. Exit status 0: every check passed; 1: a check failed; 2: NIXL or the
 * GPU is not usable here.
 */
public final class GpuTransferCheck {

  private static final long MIB = 1L << 20;
  private static final long REGION = 256 * MIB;
  private static final long CHUNK = 16 * MIB;
  private static final long TIMEOUT_NANOS = 60_000_000_000L;
  private static final long SEED_A = 1;
  private static final long SEED_B = 2;
  private static final String A = "gpu-check-a";
  private static final String B = "gpu-check-b";

  private int failures;

  private GpuTransferCheck() {}

  /** Runs the check; see the class description for the arguments. */
  public static void main(String[] args) throws Exception {
    System.exit(new GpuTransferCheck().run(new ArrayList<>(Arrays.asList(args))));
  }

  /** {@code vram} or {@code dram}, read as the {@code nixl.memory} property is. */
  private static MemoryMode memoryMode(String text) {
    return ConnectorProperties.of(Map.of(NixlOptions.MEMORY, text))
        .choice(NixlOptions.MEMORY, MemoryMode.class, MemoryMode.VRAM);
  }

  private int run(List<String> args) throws Exception {
    if (!args.isEmpty() && args.get(0).equals("peer")) {
      return peer(Path.of(args.get(1)), memoryMode(args.get(2)));
    }
    boolean compare = !args.isEmpty() && args.get(0).equals("compare");
    if (compare) {
      args.remove(0);
    }
    boolean twoProcesses = true;
    if (!args.isEmpty() && (args.get(0).equals("one") || args.get(0).equals("two"))) {
      twoProcesses = args.remove(0).equals("two");
    }
    MemoryMode mode = MemoryMode.VRAM;
    if (!args.isEmpty() && !Character.isDigit(args.get(0).charAt(0))) {
      mode = memoryMode(args.remove(0));
    }
    long[] sizes =
        !args.isEmpty()
            ? args.stream().mapToLong(Long::parseLong).toArray()
            : compare
                ? new long[] {64 * 1024, MIB, 16 * MIB, REGION}
                : new long[] {4096, 64 * 1024, MIB, 16 * MIB};

    System.out.println("java " + System.getProperty("java.version"));
    NixlLibrary.Outcome nixl = NixlLibrary.probe();
    System.out.println("NIXL: " + nixl);
    CudaRuntime.Probe cuda = CudaRuntime.probe();
    System.out.println("CUDA: " + CudaRuntime.describe(cuda));
    if (nixl instanceof NixlLibrary.Failed
        || ((mode == MemoryMode.VRAM || compare) && !cuda.usable())) {
      System.out.println("GPU CHECK NOT RUN: NIXL or the GPU is not usable here");
      return 2;
    }
    System.out.println(
        "agents in " + (twoProcesses ? "two processes" : "one process") + ", memory " + mode);
    NixlOptions options = NixlOptions.defaults().withMemory(mode);
    Path dir = Files.createTempDirectory("kvbridge-gpu-check");
    Process child = null;
    Transport a = NixlBackend.transport(A, options);
    Transport b = twoProcesses ? null : NixlBackend.transport(B, options);
    KvMemory ma = a.allocate(REGION);
    KvMemory mb = b == null ? null : b.allocate(REGION);
    try {
      a.register(ma);
      fill(ma, SEED_A);
      if (b != null) {
        b.register(mb);
        fill(mb, SEED_B);
        b.loadRemoteMetadata(a.localMetadata());
        check("load b into a", a.loadRemoteMetadata(b.localMetadata()).equals(B));
      } else {
        child = startPeer(dir, mode);
        publish(dir.resolve("a.md"), a.localMetadata());
        check("load b into a", a.loadRemoteMetadata(await(dir.resolve("b.md"))).equals(B));
      }
      Region remote =
          b != null
              ? new Region(mb.kind(), mb.address(), mb.deviceId())
              : Region.parse(new String(await(dir.resolve("b.region")), StandardCharsets.US_ASCII));
      if (compare) {
        compareWithCudaMemcpy(a, ma, remote, sizes, twoProcesses);
      } else {
        readReversedBlocks(a, ma, remote, b);
        writeWithNotification(a, ma, remote, b, mb);
        oddPieces(a, ma, remote);
        bandwidth(a, ma, remote, sizes);
      }
      if (child != null) {
        a.notify(B, "quit".getBytes(StandardCharsets.US_ASCII));
        check("peer process exits 0", child.waitFor() == 0);
      }
    } catch (RuntimeException e) {
      e.printStackTrace(System.out);
      failures++;
    } finally {
      if (child != null && child.isAlive()) {
        child.destroyForcibly();
      }
      if (b != null) {
        b.close();
        mb.close();
      }
      a.close();
      ma.close();
    }
    System.out.println(
        failures == 0 ? "GPU CHECK OK" : "GPU CHECK FAILED: " + failures + " failure(s)");
    return failures == 0 ? 0 : 1;
  }

  /** Where agent b's region lives. */
  private record Region(MemoryKind kind, long address, int device) {
    static Region parse(String text) {
      String[] parts = text.trim().split(" ");
      return new Region(
          MemoryKind.valueOf(parts[0]), Long.parseLong(parts[1]), Integer.parseInt(parts[2]));
    }

    Descriptor piece(long offset, long length) {
      return new Descriptor(address + offset, length, device);
    }
  }

  // ---- the checks (agent a's side)

  private void readReversedBlocks(Transport a, KvMemory ma, Region b, Transport bLocal) {
    int n = 64;
    long block = MIB;
    List<Descriptor> local = new ArrayList<>();
    List<Descriptor> remote = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      local.add(new Descriptor(ma.address() + i * block, block, ma.deviceId()));
      remote.add(b.piece((n - 1 - i) * block, block));
    }
    byte[] tag = {'r', 0, 'd'};
    TransferHandle h =
        a.post(
            TransferOp.READ,
            new DescriptorList(ma.kind(), local),
            B,
            new DescriptorList(b.kind(), remote),
            Optional.of(tag));
    check("READ 64 x 1 MiB settles DONE", awaitDone(a, h));
    a.release(h);
    boolean same = true;
    for (int i = 0; i < n && same; i++) {
      same = Arrays.equals(read(ma, i * block, block), pattern(SEED_B, (n - 1 - i) * block, block));
    }
    check("READ 64 x 1 MiB byte-exact (reversed block order)", same);
    if (bLocal != null) {
      check(
          "READ notification reaches b",
          awaitNotification(bLocal).equals(new Notification(A, tag)));
    } else {
      check("READ notification reaches b", awaitReply(a, "read-notified"));
    }
  }

  private void writeWithNotification(
      Transport a, KvMemory ma, Region b, Transport bLocal, KvMemory mb) {
    List<Descriptor> local = new ArrayList<>();
    List<Descriptor> remote = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      local.add(new Descriptor(ma.address() + (20 + i) * 4 * MIB, 4 * MIB, ma.deviceId()));
      remote.add(b.piece((40 + i) * 4 * MIB, 4 * MIB));
    }
    byte[] tag = "write-done".getBytes(StandardCharsets.US_ASCII);
    TransferHandle h =
        a.post(
            TransferOp.WRITE,
            new DescriptorList(ma.kind(), local),
            B,
            new DescriptorList(b.kind(), remote),
            Optional.of(tag));
    if (bLocal != null) {
      check(
          "WRITE notification reaches b",
          awaitNotification(bLocal).equals(new Notification(A, tag)));
      check("WRITE 8 x 4 MiB byte-exact when its notification arrives", writtenIntact(mb));
    } else {
      check(
          "WRITE 8 x 4 MiB byte-exact when its notification arrives (checked by b)",
          awaitReply(a, "write-ok"));
    }
    check("WRITE settles DONE", awaitDone(a, h));
    a.release(h);
  }

  private static boolean writtenIntact(KvMemory mb) {
    boolean same = true;
    for (int i = 0; i < 8 && same; i++) {
      same =
          Arrays.equals(
              read(mb, (40 + i) * 4 * MIB, 4 * MIB), pattern(SEED_A, (20 + i) * 4 * MIB, 4 * MIB));
    }
    return same;
  }

  private void oddPieces(Transport a, KvMemory ma, Region b) {
    long base = 200 * MIB;
    TransferHandle h =
        a.post(
            TransferOp.READ,
            new DescriptorList(
                ma.kind(),
                List.of(
                    new Descriptor(ma.address() + base + 1, 3, ma.deviceId()),
                    new Descriptor(ma.address() + base + 1000, 77, ma.deviceId()))),
            B,
            new DescriptorList(b.kind(), List.of(b.piece(2001, 3), b.piece(13, 77))),
            Optional.empty());
    check("odd pieces settle DONE", awaitDone(a, h));
    a.release(h);
    check(
        "odd pieces byte-exact",
        Arrays.equals(read(ma, base + 1, 3), pattern(SEED_B, 2001, 3))
            && Arrays.equals(read(ma, base + 1000, 77), pattern(SEED_B, 13, 77)));
  }

  private void bandwidth(Transport a, KvMemory ma, Region b, long[] sizes) {
    System.out.println();
    System.out.println(
        "READ bandwidth, "
            + b.kind()
            + " -> "
            + ma.kind()
            + ", one transfer of N pieces at a time:");
    System.out.printf(
        Locale.ROOT,
        "%12s %6s %12s %8s %12s %10s%n",
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
        remote.add(b.piece(i * size, size));
      }
      DescriptorList l = new DescriptorList(ma.kind(), local);
      DescriptorList r = new DescriptorList(b.kind(), remote);
      List<Long> times = new ArrayList<>();
      long started = System.nanoTime();
      for (int iter = 0; iter < 200 && (iter < 8 || System.nanoTime() - started < 2e9); iter++) {
        long t0 = System.nanoTime();
        TransferHandle h = a.post(TransferOp.READ, l, B, r, Optional.empty());
        if (!awaitDone(a, h)) {
          check("bandwidth transfer of " + size + "-byte blocks settles DONE", false);
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
      System.out.printf(
          Locale.ROOT,
          "%12d %6d %12d %8d %12.1f %10.2f%n",
          size,
          n,
          l.totalBytes(),
          times.size(),
          median / 1000.0,
          (double) l.totalBytes() / median);
    }
    check(
        "after the bandwidth runs the first MiB is byte-exact",
        Arrays.equals(read(ma, 0, MIB), pattern(SEED_B, 0, MIB)));
  }

  /**
   * Per size: one READ of one piece from b's memory into a's, alternating with a device-to-device
   * {@code cudaMemcpy} of as many bytes into a's memory from a scratch buffer on a's device, so
   * both meet the same load; the medians, printed and written as JSON.
   */
  private void compareWithCudaMemcpy(
      Transport a, KvMemory ma, Region b, long[] sizes, boolean twoProcesses) throws IOException {
    if (ma.kind() != MemoryKind.VRAM || b.kind() != MemoryKind.VRAM) {
      check("compare needs device memory on both sides", false);
      return;
    }
    System.out.println();
    System.out.println("READ VRAM -> VRAM against cudaMemcpy device to device, one piece each:");
    System.out.printf(
        Locale.ROOT,
        "%12s %8s %14s %10s %14s %10s %8s%n",
        "bytes",
        "iters",
        "READ us",
        "GB/s",
        "memcpy us",
        "GB/s",
        "ratio");
    StringBuilder json = new StringBuilder();
    try (DeviceMemory scratch = DeviceMemory.allocate(ma.deviceId(), REGION)) {
      Pointer to = new DeviceAddress(ma.address());
      Pointer from = new DeviceAddress(scratch.address());
      for (long size : sizes) {
        if (size <= 0 || size > REGION) {
          check("size " + size + " is within 1.." + REGION + " bytes", false);
          return;
        }
        DescriptorList l =
            new DescriptorList(
                ma.kind(), List.of(new Descriptor(ma.address(), size, ma.deviceId())));
        DescriptorList r = new DescriptorList(b.kind(), List.of(b.piece(0, size)));
        List<Long> reads = new ArrayList<>();
        List<Long> copies = new ArrayList<>();
        long started = System.nanoTime();
        for (int iter = 0; iter < 200 && (iter < 8 || System.nanoTime() - started < 2e9); iter++) {
          long t0 = System.nanoTime();
          int copied = cudart.cudaMemcpy(to, from, size, cudart.cudaMemcpyDeviceToDevice);
          int synced = cudart.cudaDeviceSynchronize();
          long t1 = System.nanoTime();
          if (copied != 0 || synced != 0) {
            check("cudaMemcpy device to device of " + size + " bytes", false);
            return;
          }
          TransferHandle h = a.post(TransferOp.READ, l, B, r, Optional.empty());
          if (!awaitDone(a, h)) {
            check("READ of " + size + " bytes settles DONE", false);
            return;
          }
          long t2 = System.nanoTime();
          a.release(h);
          if (iter >= 3) {
            copies.add(t1 - t0);
            reads.add(t2 - t1);
          }
        }
        reads.sort(null);
        copies.sort(null);
        long read = reads.get(reads.size() / 2);
        long copy = copies.get(copies.size() / 2);
        System.out.printf(
            Locale.ROOT,
            "%12d %8d %14.1f %10.2f %14.1f %10.2f %8.2f%n",
            size,
            reads.size(),
            read / 1000.0,
            (double) size / read,
            copy / 1000.0,
            (double) size / copy,
            (double) copy / read);
        json.append(json.length() == 0 ? "" : ",\n")
            .append(
                String.format(
                    Locale.ROOT,
                    "    {\"bytes\": %d, \"iterations\": %d, \"read_ns\": %d, \"memcpy_ns\": %d}",
                    size,
                    reads.size(),
                    read,
                    copy));
      }
    }
    check(
        "after the comparison the first 64 KiB are byte-exact",
        Arrays.equals(read(ma, 0, 64 * 1024), pattern(SEED_B, 0, 64 * 1024)));
    Path out = Path.of(System.getProperty("kvbridge.gpu.compare-out", "gpu-compare.json"));
    Files.writeString(
        out,
        "{\n  \"agents\": \""
            + (twoProcesses ? "two processes" : "one process")
            + "\",\n  \"device\": "
            + ma.deviceId()
            + ",\n  \"results\": [\n"
            + json
            + "\n  ]\n}\n",
        StandardCharsets.UTF_8);
    System.out.println("wrote " + out.toAbsolutePath());
  }

  /** A device address as a pointer the CUDA runtime binding takes; owns nothing. */
  private static final class DeviceAddress extends Pointer {
    DeviceAddress(long address) {
      this.address = address;
    }
  }

  // ---- the peer process (agent b)

  private static int peer(Path dir, MemoryMode mode) {
    Transport b = NixlBackend.transport(B, NixlOptions.defaults().withMemory(mode));
    KvMemory mb = b.allocate(REGION);
    try {
      b.register(mb);
      fill(mb, SEED_B);
      publish(dir.resolve("b.md"), b.localMetadata());
      publish(
          dir.resolve("b.region"),
          (mb.kind() + " " + mb.address() + " " + mb.deviceId())
              .getBytes(StandardCharsets.US_ASCII));
      b.loadRemoteMetadata(await(dir.resolve("a.md")));
      long deadline = System.nanoTime() + 10 * TIMEOUT_NANOS;
      while (System.nanoTime() < deadline) {
        for (Notification n : b.drainNotifications()) {
          String text = new String(n.payload(), StandardCharsets.ISO_8859_1);
          if (text.equals("quit")) {
            return 0;
          } else if (text.equals("write-done")) {
            b.notify(
                A,
                (writtenIntact(mb) ? "write-ok" : "write-bad").getBytes(StandardCharsets.US_ASCII));
          } else if (text.startsWith("r")) {
            b.notify(A, "read-notified".getBytes(StandardCharsets.US_ASCII));
          }
        }
        Thread.onSpinWait();
      }
      System.out.println("peer: no quit within its deadline");
      return 1;
    } finally {
      b.close();
      mb.close();
    }
  }

  private static Process startPeer(Path dir, MemoryMode mode) throws IOException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    return new ProcessBuilder(
            java,
            "-cp",
            System.getProperty("java.class.path"),
            GpuTransferCheck.class.getName(),
            "peer",
            dir.toString(),
            mode.toString())
        .inheritIO()
        .start();
  }

  // ---- helpers

  private boolean awaitReply(Transport a, String expected) {
    Notification n = awaitNotification(a);
    return n.fromAgent().equals(B)
        && new String(n.payload(), StandardCharsets.ISO_8859_1).equals(expected);
  }

  private static boolean awaitDone(Transport t, TransferHandle h) {
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
    System.out.println("  transfer still in progress after 60 s");
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
    return new Notification("(none within 60 s)", new byte[0]);
  }

  private void check(String what, boolean ok) {
    System.out.println((ok ? "PASS " : "FAIL ") + what);
    if (!ok) {
      failures++;
    }
  }

  private static void publish(Path file, byte[] content) {
    try {
      Path tmp = Files.createTempFile(file.getParent(), file.getFileName().toString(), ".tmp");
      Files.write(tmp, content);
      Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static byte[] await(Path file) {
    long deadline = System.nanoTime() + TIMEOUT_NANOS;
    try {
      while (!Files.exists(file)) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("no " + file + " within 60 s");
        }
        Thread.sleep(5);
      }
      return Files.readAllBytes(file);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** Writes the pattern of {@code seed} over the whole region. */
  private static void fill(KvMemory memory, long seed) {
    for (long off = 0; off < memory.sizeBytes(); off += CHUNK) {
      memory.write(off, ByteBuffer.wrap(chunk(seed, off)));
    }
  }

  /** The bytes {@link #fill} wrote at {@code [offset, offset + length)}. */
  private static byte[] pattern(long seed, long offset, long length) {
    byte[] out = new byte[(int) length];
    long done = 0;
    while (done < length) {
      long at = offset + done;
      long start = at - at % CHUNK;
      byte[] chunk = chunk(seed, start);
      int from = (int) (at - start);
      int n = (int) Math.min(length - done, CHUNK - from);
      System.arraycopy(chunk, from, out, (int) done, n);
      done += n;
    }
    return out;
  }

  private static long cachedSeed = -1;
  private static long cachedStart = -1;
  private static byte[] cachedChunk;

  private static synchronized byte[] chunk(long seed, long start) {
    if (seed != cachedSeed || start != cachedStart) {
      SplittableRandom random = new SplittableRandom(seed * 1_000_003L + start);
      ByteBuffer buffer = ByteBuffer.allocate((int) CHUNK);
      while (buffer.hasRemaining()) {
        buffer.putLong(random.nextLong());
      }
      cachedSeed = seed;
      cachedStart = start;
      cachedChunk = buffer.array();
    }
    return cachedChunk;
  }

  private static byte[] read(KvMemory memory, long offset, long length) {
    ByteBuffer dst = ByteBuffer.allocate((int) length);
    memory.read(offset, dst);
    return dst.array();
  }
}
