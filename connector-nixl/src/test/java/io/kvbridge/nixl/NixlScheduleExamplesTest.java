package io.kvbridge.nixl;

import io.kvbridge.nixl.testing.RequiresNixl;
import io.kvbridge.tck.schedule.ScheduleExamplesConformanceTest;
import org.junit.jupiter.api.extension.ExtendWith;

/** The hand-written fault schedules over real NIXL agents: UCX over loopback, host memory. */
@ExtendWith(RequiresNixl.class)
class NixlScheduleExamplesTest extends ScheduleExamplesConformanceTest {

  NixlScheduleExamplesTest() {
    super(NixlConnectorUnderTest.in(MemoryMode.DRAM));
  }
}
