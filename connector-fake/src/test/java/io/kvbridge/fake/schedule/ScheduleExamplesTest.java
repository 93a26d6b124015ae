package io.kvbridge.fake.schedule;

import io.kvbridge.fake.FakeConnectorUnderTest;
import io.kvbridge.fake.FakeFabric;
import io.kvbridge.tck.schedule.ScheduleExamplesConformanceTest;

/** The hand-written fault schedules over fake agents on one fabric with synchronous copies. */
class ScheduleExamplesTest extends ScheduleExamplesConformanceTest {

  ScheduleExamplesTest() {
    super(new FakeConnectorUnderTest(new FakeFabric(Runnable::run)));
  }
}
