package io.kvbridge.nixl;

import io.kvbridge.nixl.testing.RequiresNixl;
import io.kvbridge.tck.schedule.ScheduleExamplesConformanceTest;
import io.kvbridge.transfer.Transport;
import org.junit.jupiter.api.extension.ExtendWith;

/** The hand-written fault schedules over real NIXL agents: UCX over loopback, host memory. */
@ExtendWith(RequiresNixl.class)
class NixlScheduleExamplesTest extends ScheduleExamplesConformanceTest {

  @Override
  protected Transport newTransport(String agentName) {
    return NixlBackend.transport(agentName, NixlOptions.defaults().withMemory(MemoryMode.DRAM));
  }
}
