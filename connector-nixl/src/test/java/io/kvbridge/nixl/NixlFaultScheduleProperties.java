package io.kvbridge.nixl;

import io.kvbridge.nixl.testing.RequiresNixlForProperties;
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
 * The randomized fault schedules over real NIXL agents: UCX over loopback, host memory. Fewer tries
 * than on the fake: every try starts real agents and waits for their progress thread; fewer still
 * between engines of any shape, where a try starts up to eight agents, and more at every restart.
 */
@AddLifecycleHook(RequiresNixlForProperties.class)
class NixlFaultScheduleProperties extends FaultScheduleConformance {

  NixlFaultScheduleProperties() {
    super(NixlConnectorUnderTest.in(MemoryMode.DRAM));
  }

  @Property(tries = 150, seed = "20261130")
  @AddLifecycleHook(ScheduleSeed.class)
  void noScheduleLeaksCorruptsOrStrandsAnything(
      @ForAll("schedules") List<Op> schedule,
      @ForAll @IntRange(min = -8000, max = 8000) int clockSkewMillis) {
    checkSchedule(schedule, clockSkewMillis);
  }

  @Property(tries = 50, seed = "20261130")
  @AddLifecycleHook(ScheduleSeed.class)
  void noScheduleBetweenEnginesOfAnyShapeLeaksCorruptsOrStrandsAnything(
      @ForAll("shapes") Shape shape,
      @ForAll("schedules") List<Op> schedule,
      @ForAll @IntRange(min = -8000, max = 8000) int clockSkewMillis) {
    checkSchedule(shape, schedule, clockSkewMillis);
  }
}
