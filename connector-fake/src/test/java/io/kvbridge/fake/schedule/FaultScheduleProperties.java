package io.kvbridge.fake.schedule;

import io.kvbridge.fake.FakeConnectorUnderTest;
import io.kvbridge.fake.FakeFabric;
import io.kvbridge.tck.schedule.FaultScheduleConformance;
import io.kvbridge.tck.schedule.Op;
import io.kvbridge.tck.schedule.ScheduleSeed;
import io.kvbridge.tck.schedule.Shape;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.lifecycle.AddLifecycleHook;

/**
 * The randomized fault schedules over fake agents on one fabric with synchronous copies: between
 * engines of one rank each, and, with half the tries, between engines of any shape.
 */
class FaultScheduleProperties extends FaultScheduleConformance {

  FaultScheduleProperties() {
    super(new FakeConnectorUnderTest(new FakeFabric(Runnable::run)));
  }

  @Property(tries = 1000, seed = "20261130")
  @AddLifecycleHook(ScheduleSeed.class)
  void noScheduleLeaksCorruptsOrStrandsAnything(
      @ForAll("schedules") List<Op> schedule,
      @ForAll @IntRange(min = -8000, max = 8000) int clockSkewMillis) {
    checkSchedule(schedule, clockSkewMillis);
  }

  @Property(tries = 500, seed = "20261130")
  @AddLifecycleHook(ScheduleSeed.class)
  void noScheduleBetweenEnginesOfAnyShapeLeaksCorruptsOrStrandsAnything(
      @ForAll("shapes") Shape shape,
      @ForAll("schedules") List<Op> schedule,
      @ForAll @IntRange(min = -8000, max = 8000) int clockSkewMillis) {
    checkSchedule(shape, schedule, clockSkewMillis);
  }
}
