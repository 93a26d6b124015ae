package io.kvbridge.fake;

import static io.kvbridge.fake.TwoAgents.firstBytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.Transport;
import io.kvbridge.transfer.TransportException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the shared-directory fabric does beyond the shared contract. */
class SharedDirectoryTest {

  @TempDir Path dir;
  private FakeFabric fabric;
  private TwoAgents agents;

  @BeforeEach
  void open() {
    fabric = FakeFabric.sharedDirectory(dir);
    agents = new TwoAgents(fabric);
  }

  @AfterEach
  void close() {
    agents.close();
  }

  @Test
  void oneFabricPerDirectoryInThisJvm() {
    assertThat(FakeFabric.sharedDirectory(dir.resolve(".").resolve("regions").resolve("..")))
        .isSameAs(fabric);
  }

  @Test
  void memoryIsAFileInTheRegionsDirectoryUntilItIsClosed() throws IOException {
    KvMemory memory = agents.decode.allocate(100);
    assertThat(regionFiles()).isEqualTo(3);

    memory.close();

    assertThat(regionFiles()).isEqualTo(2);
  }

  @Test
  void agentNameThatCannotNameAFileIsRefused() {
    assertThatThrownBy(() -> fabric.join("a/b"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("cannot name a file");
  }

  @Test
  void joinUniqueMakesANameFileSafe() {
    try (Transport agent = fabric.joinUnique("engine:7/x")) {
      assertThat(agent.agentName()).isEqualTo("engine_7_x");
    }
  }

  @Test
  void nameHeldInThisJvmIsTaken() {
    assertThatThrownBy(() -> fabric.join("decode")).isInstanceOf(TransportException.class);
  }

  @Test
  void drainingEmptiesTheMailbox() throws IOException {
    agents.decode.notify("prefill", new byte[] {1});

    agents.prefill.drainNotifications();

    assertThat(mailbox("prefill")).isEmpty();
  }

  @Test
  void malformedMailboxFileIsDiscardedAndTheRestArrive() throws IOException {
    Files.write(dir.resolve("agents/prefill/mailbox/0.msg"), new byte[] {'K', 'V', 'B', 'N', 9});
    agents.decode.notify("prefill", new byte[] {2});

    assertThat(firstBytes(agents.prefill.drainNotifications())).containsExactly((byte) 2);
    assertThat(mailbox("prefill")).isEmpty();
  }

  @Test
  void closedAgentIsUnreachableAndItsNameFree() {
    agents.prefill.close();

    assertThatThrownBy(() -> agents.read(1)).hasMessageContaining("not reachable");
    try (Transport successor = fabric.join("prefill")) {
      assertThat(successor.agentName()).isEqualTo("prefill");
    }
  }

  @Test
  void closedAgentLeavesNoInstanceFile() {
    agents.prefill.close();

    assertThat(dir.resolve("agents/prefill/instance")).doesNotExist();
  }

  private long regionFiles() throws IOException {
    try (Stream<Path> files = Files.list(dir.resolve("regions"))) {
      return files.count();
    }
  }

  private List<Path> mailbox(String agent) throws IOException {
    try (Stream<Path> files = Files.list(dir.resolve("agents").resolve(agent).resolve("mailbox"))) {
      return files.toList();
    }
  }
}
