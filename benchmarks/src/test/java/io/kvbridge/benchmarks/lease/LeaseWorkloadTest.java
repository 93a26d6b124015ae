package io.kvbridge.benchmarks.lease;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class LeaseWorkloadTest {

  private static final int LIVE = 1000;

  @ParameterizedTest
  @EnumSource(LeaseBookKind.class)
  void afterFillingNothingIsDue(LeaseBookKind kind) {
    LeaseWorkload workload = new LeaseWorkload(kind, LIVE, 16, 1).fill();

    assertThat(workload.book().expire()).isEmpty();
    assertThat(workload.book().size()).isEqualTo(LIVE);
  }

  @ParameterizedTest
  @EnumSource(LeaseBookKind.class)
  void eachFurtherGrantMakesExactlyTheOldestLeaseDue(LeaseBookKind kind) {
    LeaseWorkload workload = new LeaseWorkload(kind, LIVE, 16, 1).fill();

    for (int round = 0; round < 3 * LIVE / 16; round++) {
      for (int i = 0; i < 16; i++) {
        workload.grantNext();
      }
      workload.expireExpecting(16);
    }

    assertThat(workload.book().size()).isEqualTo(LIVE);
  }

  @ParameterizedTest
  @EnumSource(LeaseBookKind.class)
  void heartbeatsKeepEveryLeaseAliveForSeveralLeaseDurations(LeaseBookKind kind) {
    LeaseWorkload workload = new LeaseWorkload(kind, LIVE, 0, 1).fill();

    for (int i = 0; i < 6 * LIVE; i++) {
      assertThat(workload.renewNext()).isTrue();
    }

    assertThat(workload.book().expire()).isEmpty();
    assertThat(workload.book().size()).isEqualTo(LIVE);
  }

  @ParameterizedTest
  @EnumSource(LeaseBookKind.class)
  void aFreshLeaseIsGrantedConfirmedAndAcknowledgedBesideThePopulation(LeaseBookKind kind) {
    LeaseWorkload workload = new LeaseWorkload(kind, LIVE, 0, 4).fill();

    workload.grantFresh(2);

    assertThat(workload.book().size()).isEqualTo(LIVE + 1);
    assertThat(workload.confirmFresh(2)).isTrue();
    assertThat(workload.acknowledgeFresh(2)).isTrue();
    assertThat(workload.book().size()).isEqualTo(LIVE);
  }
}
