package io.kvbridge.fake;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.kvbridge.transfer.Descriptor;
import io.kvbridge.transfer.DescriptorList;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.Notification;
import io.kvbridge.transfer.TransferOp;
import io.kvbridge.transfer.Transport;
import io.kvbridge.transfer.TransportException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Two processes reach each other through a shared directory, and a crash is noticed. */
class CrossProcessTest {

  private static final int REGION = SharedDirectoryPeer.BLOCK * SharedDirectoryPeer.BLOCKS;
  private static final int HALF = REGION / 2;

  @TempDir Path dir;

  @Test
  void anotherProcessReadsAndWritesThisProcessesMemoryAndNotifiesIt() throws Exception {
    Transport parent = FakeFabric.sharedDirectory(dir).join("parent");
    KvMemory memory = parent.allocate(REGION);
    Process child = null;
    try {
      parent.register(memory);
      byte[] data = new byte[REGION];
      new Random(11).nextBytes(data);
      Arrays.fill(data, HALF, REGION, (byte) 0);
      memory.write(0, ByteBuffer.wrap(data));
      Files.write(dir.resolve("parent.meta"), parent.localMetadata());

      child = startChild(memory.address());
      Path childMeta = dir.resolve("child.meta");
      await().atMost(Duration.ofSeconds(30)).until(() -> Files.exists(childMeta));
      assertThat(parent.loadRemoteMetadata(Files.readAllBytes(childMeta))).isEqualTo("child");
      List<Notification> drained = new ArrayList<>();
      await()
          .atMost(Duration.ofSeconds(30))
          .pollInterval(Duration.ofMillis(5))
          .until(
              () -> {
                drained.addAll(parent.drainNotifications());
                return !drained.isEmpty();
              });

      // The notification came after the child's WRITE: the bytes it carried are already here.
      byte[] now = new byte[REGION];
      memory.read(0, ByteBuffer.wrap(now));
      assertThat(drained)
          .containsExactly(new Notification("child", "done".getBytes(StandardCharsets.US_ASCII)));
      assertThat(Arrays.copyOfRange(now, HALF, REGION))
          .isEqualTo(Arrays.copyOfRange(data, 0, HALF));

      child.destroyForcibly().waitFor(30, TimeUnit.SECONDS);

      // Its lock died with it: the crashed agent is unreachable without any cleanup.
      long childBase = firstRegionBase(childMeta);
      assertThatThrownBy(
              () ->
                  parent.post(
                      TransferOp.READ,
                      new DescriptorList(
                          memory.kind(), List.of(new Descriptor(memory.address(), 64, 0))),
                      "child",
                      new DescriptorList(memory.kind(), List.of(new Descriptor(childBase, 64, 0))),
                      Optional.empty()))
          .isInstanceOf(TransportException.class)
          .hasMessageContaining("not reachable");
    } finally {
      if (child != null) {
        child.destroyForcibly();
      }
      parent.close();
      memory.close();
    }
  }

  private Process startChild(long parentBase) throws Exception {
    String java = ProcessHandle.current().info().command().orElse("java");
    return new ProcessBuilder(
            java,
            "-cp",
            System.getProperty("java.class.path"),
            SharedDirectoryPeer.class.getName(),
            dir.toString(),
            Long.toString(parentBase))
        .redirectErrorStream(true)
        .redirectOutput(dir.resolve("child.log").toFile())
        .start();
  }

  private static long firstRegionBase(Path metadata) throws Exception {
    return AgentMetadata.decode(Files.readAllBytes(metadata)).regions().get(0).address();
  }
}
