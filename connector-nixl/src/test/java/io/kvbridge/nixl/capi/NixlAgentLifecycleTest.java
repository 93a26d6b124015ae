package io.kvbridge.nixl.capi;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.nixl.testing.ProcessStats;
import io.kvbridge.nixl.testing.RequiresNixl;
import io.kvbridge.transfer.Descriptor;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.bytedeco.javacpp.Pointer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Agents created and destroyed in a loop give their native memory and threads back. The bounds are
 * loose on purpose (the JVM's own RSS moves too); a leak of one UCX worker or progress thread per
 * agent exceeds them many times over.
 */
@ExtendWith(RequiresNixl.class)
class NixlAgentLifecycleTest {

  @Test
  void bareAgentsCreatedAndDestroyedInALoopLeakNothing() {
    cycle(20, false);
    long rssBefore = ProcessStats.rssKib();
    long threadsBefore = ProcessStats.threads();

    cycle(2000, false);

    assertThat(ProcessStats.rssKib() - rssBefore).isLessThan(16 * 1024);
    assertThat(ProcessStats.threads()).isLessThanOrEqualTo(threadsBefore + 2);
  }

  @Test
  void agentsWithABackendAndRegisteredMemoryLeakNothing() {
    cycle(5, true);
    long rssBefore = ProcessStats.rssKib();
    long threadsBefore = ProcessStats.threads();

    cycle(60, true);

    assertThat(ProcessStats.rssKib() - rssBefore).isLessThan(32 * 1024);
    assertThat(ProcessStats.threads()).isLessThanOrEqualTo(threadsBefore + 2);
  }

  @Test
  void preparedListsPreparedAndReleasedInALoopLeakNothing() {
    Pointer buffer = Pointer.calloc(1 << 20, 1);
    try (NixlAgent agent = NixlAgent.create("lifecycle-prepared", 1000, false)) {
      agent.createBackend("UCX", Map.of());
      Descriptor region = new Descriptor(buffer.address(), 1 << 20, 0);
      agent.registerMemory(NixlCapi.MEM_DRAM, region);
      List<Descriptor> blocks = new ArrayList<>();
      for (int b = 0; b < 64; b++) {
        blocks.add(new Descriptor(buffer.address() + b * 16384L, 16384, 0));
      }
      prepareAndRelease(agent, blocks, 200);
      long rssBefore = ProcessStats.rssKib();

      prepareAndRelease(agent, blocks, 20_000);

      assertThat(ProcessStats.rssKib() - rssBefore).isLessThan(16 * 1024);
      agent.deregisterMemory(NixlCapi.MEM_DRAM, region);
    } finally {
      Pointer.free(buffer);
    }
  }

  private static void prepareAndRelease(NixlAgent agent, List<Descriptor> blocks, int times) {
    for (int i = 0; i < times; i++) {
      agent
          .prepareList("", NixlCapi.MEM_DRAM, blocks, s -> new IllegalStateException("status " + s))
          .close();
    }
  }

  private static void cycle(int times, boolean withBackend) {
    Pointer buffer = Pointer.calloc(1 << 20, 1);
    try {
      Descriptor region = new Descriptor(buffer.address(), 1 << 20, 0);
      for (int i = 0; i < times; i++) {
        try (NixlAgent agent = NixlAgent.create("lifecycle-" + i, 1000, false)) {
          if (withBackend) {
            agent.createBackend("UCX", Map.of());
            agent.registerMemory(NixlCapi.MEM_DRAM, region);
            assertThat(agent.localMetadata()).isNotEmpty();
          }
        }
      }
    } finally {
      Pointer.free(buffer);
    }
  }
}
