package io.kvbridge.fake.schedule;

import io.kvbridge.fake.FakeFabric;
import io.kvbridge.tck.schedule.ScheduleExamplesConformanceTest;
import io.kvbridge.transfer.Transport;

/** The hand-written fault schedules over fake agents on one fabric with synchronous copies. */
class ScheduleExamplesTest extends ScheduleExamplesConformanceTest {

  private final FakeFabric fabric = new FakeFabric(Runnable::run);

  @Override
  protected Transport newTransport(String agentName) {
    return fabric.join(agentName);
  }
}
