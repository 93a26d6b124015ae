package io.kvbridge.benchmarks.lease;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.lease.EndReason;
import io.kvbridge.lease.Lease;
import io.kvbridge.lease.LeaseEnd;
import io.kvbridge.lease.LeaseTerms;
import io.kvbridge.time.ManualClock;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class LeaseBookTest {

  private static final Duration LEASE = Duration.ofSeconds(30);
  private static final LeaseTerms TERMS = new LeaseTerms(LEASE, Duration.ofSeconds(120));
  private static final List<Integer> BLOCKS = List.of(1);

  private final ManualClock clock = new ManualClock();

  @ParameterizedTest
  @EnumSource(LeaseBookKind.class)
  void withoutRenewalsEverySweepEndsExactlyTheExpiredLeases(LeaseBookKind kind) {
    LeaseBook book = kind.create(clock, TERMS);
    book.grant("a", BLOCKS);
    clock.advance(Duration.ofSeconds(1));
    book.grant("b", BLOCKS);
    clock.advance(Duration.ofSeconds(1));
    book.grant("c", BLOCKS);

    clock.advance(Duration.ofSeconds(29));

    assertThat(book.expire())
        .extracting(end -> end.lease().requestId())
        .containsExactlyInAnyOrder("a", "b");
    assertThat(book.size()).isEqualTo(1);
  }

  @ParameterizedTest
  @EnumSource(
      value = LeaseBookKind.class,
      names = {"TABLE", "FULL_SCAN"})
  void withRenewalsASweepFindsAnExpiredLeaseBehindARenewedOne(LeaseBookKind kind) {
    LeaseBook book = expiredLeaseBehindRenewedOne(kind);

    assertThat(book.expire()).extracting(end -> end.lease().requestId()).containsExactly("b");
  }

  @ParameterizedTest
  @EnumSource(
      value = LeaseBookKind.class,
      names = {"INSERTION_ORDERED"})
  void withRenewalsAnInsertionOrderedSweepMissesAnExpiredLeaseBehindARenewedOne(
      LeaseBookKind kind) {
    LeaseBook book = expiredLeaseBehindRenewedOne(kind);

    assertThat(book.expire()).isEmpty();
    assertThat(book.size()).isEqualTo(2);
  }

  /** "a" granted first and renewed, "b" granted after it and now past its deadline. */
  private LeaseBook expiredLeaseBehindRenewedOne(LeaseBookKind kind) {
    LeaseBook book = kind.create(clock, TERMS);
    Lease a = book.grant("a", BLOCKS);
    clock.advance(Duration.ofSeconds(1));
    book.grant("b", BLOCKS);
    clock.advance(Duration.ofSeconds(20));
    assertThat(book.renew("a", a.token().value())).isTrue();
    clock.advance(Duration.ofSeconds(11));
    return book;
  }

  @ParameterizedTest
  @EnumSource(LeaseBookKind.class)
  void acknowledgementWithTheRightTokenEndsTheLease(LeaseBookKind kind) {
    LeaseBook book = kind.create(clock, TERMS);
    Lease lease = book.grant("a", BLOCKS);
    assertThat(book.confirm("a", lease.token().value())).isTrue();

    assertThat(book.acknowledge("a", lease.token().value())).isTrue();
    assertThat(book.size()).isZero();
  }

  @ParameterizedTest
  @EnumSource(LeaseBookKind.class)
  void acknowledgementOfALeaseNobodyConfirmedKeepsTheLease(LeaseBookKind kind) {
    LeaseBook book = kind.create(clock, TERMS);
    Lease lease = book.grant("a", BLOCKS);

    assertThat(book.acknowledge("a", lease.token().value())).isFalse();
    assertThat(book.size()).isEqualTo(1);
  }

  @ParameterizedTest
  @EnumSource(LeaseBookKind.class)
  void acknowledgementWithAWrongTokenKeepsTheLease(LeaseBookKind kind) {
    LeaseBook book = kind.create(clock, TERMS);
    book.grant("a", BLOCKS);
    Lease other = book.grant("b", BLOCKS);

    assertThat(book.acknowledge("a", other.token().value())).isFalse();
    assertThat(book.size()).isEqualTo(2);
  }

  @ParameterizedTest
  @EnumSource(LeaseBookKind.class)
  void acknowledgementAfterTheDeadlineIsRefusedAndEndsTheLease(LeaseBookKind kind) {
    LeaseBook book = kind.create(clock, TERMS);
    Lease lease = book.grant("a", BLOCKS);
    assertThat(book.confirm("a", lease.token().value())).isTrue();
    clock.advance(LEASE);

    assertThat(book.acknowledge("a", lease.token().value())).isFalse();
    assertThat(book.size()).isZero();
  }

  @ParameterizedTest
  @EnumSource(LeaseBookKind.class)
  void renewalNeverPassesTheMaximumLifetime(LeaseBookKind kind) {
    LeaseBook book = kind.create(clock, TERMS);
    Lease lease = book.grant("a", BLOCKS);
    for (int i = 0; i < 4; i++) {
      clock.advance(Duration.ofSeconds(25));
      assertThat(book.renew("a", lease.token().value())).isTrue();
    }
    // Now 100 s after the grant: the last renewal stopped at the 120 s maximum, not at 130 s.
    clock.advance(Duration.ofSeconds(20).minusNanos(1));
    assertThat(book.expire()).isEmpty();

    clock.advance(Duration.ofNanos(1));

    assertThat(book.expire())
        .singleElement()
        .extracting(LeaseEnd::reason)
        .isEqualTo(EndReason.EXPIRED);
  }
}
