package io.kvbridge.lease;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.time.ManualClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class LeaseTableTest {

  private static final Duration LEASE = Duration.ofSeconds(30);
  private static final Duration MAX_LIFETIME = Duration.ofSeconds(90);
  private static final byte[] READ = digest(1);

  private final ManualClock clock = new ManualClock();
  private final List<Lease> grants = new ArrayList<>();
  private final List<Lease> renewals = new ArrayList<>();
  private final List<LeaseEnd> ends = new ArrayList<>();
  private final LeaseTable table =
      new LeaseTable(
          clock,
          new LeaseTerms(LEASE, MAX_LIFETIME),
          new LeaseListener() {
            @Override
            public void granted(Lease lease) {
              grants.add(lease);
            }

            @Override
            public void renewed(Lease lease) {
              renewals.add(lease);
            }

            @Override
            public void ended(LeaseEnd end) {
              ends.add(end);
            }
          });

  @Test
  void grantSetsDeadlineOneDurationAheadAndHardLimitOneLifetimeAhead() {
    long now = clock.nanoTime();
    Lease lease = table.grant("r1", List.of(3, 4), 1, READ);

    assertThat(lease.deadlineNanos()).isEqualTo(now + LEASE.toNanos());
    assertThat(lease.maxDeadlineNanos()).isEqualTo(now + MAX_LIFETIME.toNanos());
    assertThat(lease.blockIds()).containsExactly(3, 4);
    assertThat(table.size()).isEqualTo(1);
  }

  @Test
  void grantedBlockListIsACopyThatNoOneCanChange() {
    List<Integer> blocks = new ArrayList<>(List.of(3, 4));
    Lease lease = table.grant("r1", blocks, 1, READ);
    blocks.set(0, 9);

    assertThat(lease.blockIds()).containsExactly(3, 4).isEqualTo(List.of(3, 4));
    assertThatThrownBy(() -> lease.blockIds().set(0, 9))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> table.grant("r2", Arrays.asList(1, null), 1, READ))
        .isInstanceOf(NullPointerException.class);
  }

  @Test
  void tokensAreUniquePerLease() {
    Lease a = table.grant("a", List.of(1), 1, READ);
    Lease b = table.grant("b", List.of(2), 1, READ);

    assertThat(a.token()).isNotEqualTo(b.token());
  }

  @Test
  void tokensStayWellFormedAndDistinctAcrossManyGrants() {
    java.util.Set<String> seen = new java.util.HashSet<>();
    for (int i = 0; i < 1000; i++) {
      String token = table.grant("r" + i, List.of(i), 1, READ).token().value();
      assertThat(LeaseToken.isWellFormed(token)).isTrue();
      seen.add(token);
    }

    assertThat(seen).hasSize(1000);
  }

  @Test
  void tokenMatchesOnlyItself() {
    LeaseToken token = LeaseToken.random();

    assertThat(token.matches(token.value())).isTrue();
    assertThat(token.matches(LeaseToken.random().value())).isFalse();
    assertThat(token.matches(token.value().substring(1))).isFalse();
    assertThat(token.matches(null)).isFalse();
  }

  @Test
  void grantingTwiceForALiveRequestIsRefused() {
    table.grant("r1", List.of(1), 1, READ);

    assertThatThrownBy(() -> table.grant("r1", List.of(2), 1, READ))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("r1");
  }

  @Test
  void leaseWithoutBlocksIsRefused() {
    assertThatThrownBy(() -> table.grant("r1", List.of(), 1, READ))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void acknowledgementWithRightTokenEndsLeaseAsRead() {
    Lease lease = table.grant("r1", List.of(1), 1, READ);
    confirmed("r1", lease, "d0");

    AckOutcome outcome = table.acknowledge("r1", lease.token().value(), claim("d0", READ));

    assertThat(outcome).isInstanceOf(AckOutcome.Read.class);
    assertThat(ends).singleElement().extracting(LeaseEnd::reason).isEqualTo(EndReason.READ);
    assertThat(table.size()).isZero();
  }

  @Test
  void acknowledgementWithWrongTokenFreesNothing() {
    table.grant("r1", List.of(1), 1, READ);

    AckOutcome outcome = table.acknowledge("r1", LeaseToken.random().value(), claim("d0", READ));

    assertThat(outcome).isEqualTo(new AckOutcome.Refused(Rejection.WRONG_TOKEN, Optional.empty()));
    assertThat(ends).isEmpty();
    assertThat(table.size()).isEqualTo(1);
  }

  @Test
  void acknowledgementOfTheConfirmedReadThatNoLongerMatchesTheBindingEndsNothing() {
    Lease lease = table.grant("r1", List.of(1), 1, READ);
    confirmed("r1", lease, "d0");

    AckOutcome outcome =
        table.acknowledge(
            "r1", lease.token().value(), new ReadClaim("d0", READ, 0, binding -> false));

    assertThat(outcome).isEqualTo(new AckOutcome.Refused(Rejection.WRONG_BLOCKS, Optional.empty()));
    assertThat(ends).isEmpty();
    assertThat(table.acknowledge("r1", lease.token().value(), claim("d0", READ)))
        .isInstanceOf(AckOutcome.Read.class);
  }

  @Test
  void acknowledgementWithoutAConfirmationIsRefusedAndChangesNothing() {
    Lease lease = table.grant("r1", List.of(1), 1, READ);
    clock.advance(Duration.ofSeconds(20));

    AckOutcome outcome = table.acknowledge("r1", lease.token().value(), claim("d0", READ));

    assertThat(outcome)
        .isEqualTo(new AckOutcome.Refused(Rejection.NOT_CONFIRMED, Optional.empty()));
    assertThat(ends).isEmpty();
    assertThat(renewals).isEmpty();
    assertThat(table.find("r1")).contains(lease);
  }

  @Test
  void aConfirmedReadIsAcknowledgedAfterAnUnconfirmedCompletionWasRefused() {
    Lease lease = table.grant("r1", List.of(1), 1, READ);
    table.acknowledge("r1", lease.token().value(), claim("d0", READ));

    confirmed("r1", lease, "d0");

    assertThat(table.acknowledge("r1", lease.token().value(), claim("d0", READ)))
        .isInstanceOf(AckOutcome.Read.class);
    assertThat(ends).singleElement().extracting(LeaseEnd::reason).isEqualTo(EndReason.READ);
  }

  @Test
  void acknowledgementSkippingOtherTokensThanConfirmedIsRefusedAsNotConfirmed() {
    Lease lease = table.grant("r1", List.of(1), 1, READ);
    table.confirm("r1", lease.token().value(), claim("d0", READ, 4));

    AckOutcome outcome = table.acknowledge("r1", lease.token().value(), claim("d0", READ, 0));

    assertThat(outcome)
        .isEqualTo(new AckOutcome.Refused(Rejection.NOT_CONFIRMED, Optional.empty()));
    assertThat(table.isLive("r1")).isTrue();
    assertThat(table.acknowledge("r1", lease.token().value(), claim("d0", READ, 4)))
        .isInstanceOf(AckOutcome.Read.class);
  }

  @Test
  void acknowledgementPresentingAnotherDigestThanConfirmedIsRefusedAsNotConfirmed() {
    Lease lease = table.grant("r1", List.of(1), 1, READ);
    confirmed("r1", lease, "d0");
    // A claim whose check would pass, but whose digest is not the one the consumer confirmed.
    ReadClaim other = new ReadClaim("d0", digest(2), 0, binding -> true);

    AckOutcome outcome = table.acknowledge("r1", lease.token().value(), other);

    assertThat(outcome)
        .isEqualTo(new AckOutcome.Refused(Rejection.NOT_CONFIRMED, Optional.empty()));
    assertThat(ends).isEmpty();
  }

  @Test
  void anotherConsumersConfirmationDoesNotCoverAnAcknowledgement() {
    Lease lease = table.grant("r1", List.of(1), 1, READ);
    confirmed("r1", lease, "d0");

    AckOutcome outcome = table.acknowledge("r1", lease.token().value(), claim("d1", READ));

    assertThat(outcome)
        .isEqualTo(new AckOutcome.Refused(Rejection.NOT_CONFIRMED, Optional.empty()));
    assertThat(table.acknowledge("r1", lease.token().value(), claim("d0", READ)))
        .isInstanceOf(AckOutcome.Read.class);
  }

  @Test
  void aConsumerConfirmingAgainReplacesItsEarlierConfirmation() {
    Lease lease = table.grant("r1", List.of(1), 1, READ);
    table.confirm("r1", lease.token().value(), claim("d0", READ, 0));
    table.confirm("r1", lease.token().value(), claim("d0", READ, 8));

    assertThat(table.acknowledge("r1", lease.token().value(), claim("d0", READ, 0)))
        .isEqualTo(new AckOutcome.Refused(Rejection.NOT_CONFIRMED, Optional.empty()));
    assertThat(table.acknowledge("r1", lease.token().value(), claim("d0", READ, 8)))
        .isInstanceOf(AckOutcome.Read.class);
  }

  @Test
  void aRefusedConfirmationLeavesTheEarlierOneInPlace() {
    Lease lease = table.grant("r1", List.of(1), 1, READ);
    confirmed("r1", lease, "d0");

    assertThat(table.confirm("r1", lease.token().value(), claim("d0", digest(2))))
        .isEqualTo(new RenewOutcome.Ignored(Rejection.WRONG_BLOCKS));

    assertThat(table.acknowledge("r1", lease.token().value(), claim("d0", READ)))
        .isInstanceOf(AckOutcome.Read.class);
  }

  @Test
  void aConfirmationBeyondTheRequiredConsumersReplacesTheLeastRecentUnacknowledgedOne() {
    Lease lease = table.grant("r1", List.of(1), 2, READ);
    String token = lease.token().value();
    confirmed("r1", lease, "d0");
    confirmed("r1", lease, "d1");
    assertThat(table.acknowledge("r1", token, claim("d0", READ)))
        .isEqualTo(new AckOutcome.Partial(1));

    confirmed("r1", lease, "d2");

    assertThat(table.acknowledge("r1", token, claim("d1", READ)))
        .isEqualTo(new AckOutcome.Refused(Rejection.NOT_CONFIRMED, Optional.empty()));
    assertThat(table.acknowledge("r1", token, claim("d2", READ)))
        .isInstanceOf(AckOutcome.Read.class);
    assertThat(ends).singleElement().extracting(LeaseEnd::detail).isEqualTo("read by d2");
  }

  @Test
  void aConsumerWhoseReadWasAcknowledgedCannotConfirmOrCompleteTheLeaseAgain() {
    Lease lease = table.grant("r1", List.of(1), 2, READ);
    String token = lease.token().value();
    confirmed("r1", lease, "d0");
    table.acknowledge("r1", token, claim("d0", READ));

    assertThat(table.confirm("r1", token, claim("d0", READ)))
        .isEqualTo(new RenewOutcome.Ignored(Rejection.ALREADY_ENDED));
    assertThat(table.acknowledge("r1", token, claim("d0", READ)))
        .isEqualTo(new AckOutcome.Refused(Rejection.ALREADY_ENDED, Optional.empty()));
    assertThat(table.find("r1")).get().extracting(Lease::acksReceived).isEqualTo(1);
    assertThat(ends).isEmpty();
  }

  @Test
  void acknowledgementOfUnknownRequestFreesNothing() {
    table.grant("r1", List.of(1), 1, READ);

    AckOutcome outcome = table.acknowledge("nope", LeaseToken.random().value(), claim("d0", READ));

    assertThat(outcome).isInstanceOf(AckOutcome.Refused.class);
    assertThat(((AckOutcome.Refused) outcome).reason()).isEqualTo(Rejection.UNKNOWN_LEASE);
    assertThat(ends).isEmpty();
  }

  @Test
  void duplicateAcknowledgementIsRecognisedAsLateAndEndsNothingTwice() {
    Lease lease = table.grant("r1", List.of(1), 1, READ);
    confirmed("r1", lease, "d0");
    table.acknowledge("r1", lease.token().value(), claim("d0", READ));

    AckOutcome second = table.acknowledge("r1", lease.token().value(), claim("d0", READ));

    assertThat(((AckOutcome.Refused) second).reason()).isEqualTo(Rejection.ALREADY_ENDED);
    assertThat(ends).hasSize(1);
  }

  @Test
  void acknowledgementAfterDeadlineEndsLeaseAsExpiredAndIsRefused() {
    Lease lease = table.grant("r1", List.of(1), 1, READ);
    confirmed("r1", lease, "d0");
    clock.advance(LEASE);

    AckOutcome outcome = table.acknowledge("r1", lease.token().value(), claim("d0", READ));

    assertThat(outcome).isInstanceOf(AckOutcome.Refused.class);
    AckOutcome.Refused refused = (AckOutcome.Refused) outcome;
    assertThat(refused.reason()).isEqualTo(Rejection.EXPIRED);
    assertThat(refused.expiredNow()).map(LeaseEnd::reason).contains(EndReason.EXPIRED);
    assertThat(ends).singleElement().extracting(LeaseEnd::reason).isEqualTo(EndReason.EXPIRED);
  }

  @Test
  void leaseWaitingForTwoConsumersEndsOnlyAfterBothDistinctAcknowledgements() {
    Lease lease = table.grant("r1", List.of(1), 2, READ);
    String token = lease.token().value();
    confirmed("r1", lease, "d0");
    confirmed("r1", lease, "d1");

    assertThat(table.acknowledge("r1", token, claim("d0", READ)))
        .isInstanceOf(AckOutcome.Partial.class);
    assertThat(table.acknowledge("r1", token, claim("d0", READ)))
        .isEqualTo(new AckOutcome.Refused(Rejection.ALREADY_ENDED, Optional.empty()));
    assertThat(ends).isEmpty();
    assertThat(table.isLive("r1")).isTrue();
    assertThat(table.acknowledge("r1", token, claim("d1", READ)))
        .isInstanceOf(AckOutcome.Read.class);
    assertThat(ends).hasSize(1);
  }

  @Test
  void expireEndsExactlyTheLeasesPastTheirDeadlineInDeadlineOrder() {
    table.grant("first", List.of(1), 1, READ);
    clock.advance(Duration.ofSeconds(10));
    table.grant("second", List.of(2), 1, READ);
    clock.advance(Duration.ofSeconds(10));
    table.grant("third", List.of(3), 1, READ);

    clock.advance(Duration.ofSeconds(15)); // first: 35 s old, second: 25 s, third: 15 s
    assertThat(table.expire()).extracting(e -> e.lease().requestId()).containsExactly("first");
    clock.advance(Duration.ofSeconds(10));
    assertThat(table.expire()).extracting(e -> e.lease().requestId()).containsExactly("second");
    assertThat(table.size()).isEqualTo(1);
  }

  @Test
  void expireBeforeAnyDeadlineEndsNothing() {
    table.grant("r1", List.of(1), 1, READ);
    clock.advance(LEASE.minusNanos(1));

    assertThat(table.expire()).isEmpty();
    assertThat(table.size()).isEqualTo(1);
  }

  @Test
  void renewalExtendsToOneDurationFromNow() {
    Lease lease = table.grant("r1", List.of(1), 1, READ);
    clock.advance(Duration.ofSeconds(20));

    RenewOutcome outcome = table.renew("r1", lease.token().value());

    assertThat(outcome).isInstanceOf(RenewOutcome.Renewed.class);
    assertThat(((RenewOutcome.Renewed) outcome).deadlineNanos())
        .isEqualTo(clock.nanoTime() + LEASE.toNanos());
    clock.advance(Duration.ofSeconds(29));
    assertThat(table.expire()).isEmpty();
  }

  @Test
  void renewalNeverShortensALease() {
    Lease lease = table.grant("r1", List.of(1), 1, READ);
    clock.advance(Duration.ofSeconds(20));
    long extended =
        ((RenewOutcome.Renewed) table.renew("r1", lease.token().value())).deadlineNanos();

    RenewOutcome again = table.renew("r1", lease.token().value());

    assertThat(((RenewOutcome.Renewed) again).deadlineNanos()).isEqualTo(extended);
    assertThat(extended).isGreaterThan(lease.deadlineNanos());
  }

  @Test
  void renewalNeverPassesTheMaximumLifetime() {
    Lease lease = table.grant("r1", List.of(1), 1, READ);
    for (int i = 0; i < 10; i++) {
      clock.advance(Duration.ofSeconds(20));
      table.renew("r1", lease.token().value());
    }

    assertThat(ends).singleElement().extracting(LeaseEnd::reason).isEqualTo(EndReason.EXPIRED);
    assertThat(ends.get(0).lease().deadlineNanos()).isEqualTo(lease.maxDeadlineNanos());
  }

  @Test
  void renewalAtTheMaximumLifetimeLeavesDeadlineAtTheLimit() {
    Lease lease = table.grant("r1", List.of(1), 1, READ);
    clock.advance(Duration.ofSeconds(25));
    table.renew("r1", lease.token().value());
    clock.advance(Duration.ofSeconds(25));
    table.renew("r1", lease.token().value());
    clock.advance(Duration.ofSeconds(25));

    RenewOutcome last = table.renew("r1", lease.token().value());

    assertThat(((RenewOutcome.Renewed) last).deadlineNanos()).isEqualTo(lease.maxDeadlineNanos());
  }

  @Test
  void renewalReordersExpiry() {
    Lease early = table.grant("early", List.of(1), 1, READ);
    clock.advance(Duration.ofSeconds(5));
    table.grant("late", List.of(2), 1, READ);
    clock.advance(Duration.ofSeconds(20));
    table.renew("early", early.token().value()); // early now ends at 55 s, late at 35 s

    clock.advance(Duration.ofSeconds(11));

    assertThat(table.expire()).extracting(e -> e.lease().requestId()).containsExactly("late");
    assertThat(table.find("early")).isPresent();
  }

  @Test
  void renewalWithWrongTokenIsIgnored() {
    Lease lease = table.grant("r1", List.of(1), 1, READ);
    clock.advance(Duration.ofSeconds(20));

    RenewOutcome outcome = table.renew("r1", LeaseToken.random().value());

    assertThat(outcome).isEqualTo(new RenewOutcome.Ignored(Rejection.WRONG_TOKEN));
    assertThat(table.find("r1").orElseThrow().deadlineNanos()).isEqualTo(lease.deadlineNanos());
  }

  @Test
  void renewalOfEndedLeaseIsIgnoredAsAlreadyEnded() {
    Lease lease = table.grant("r1", List.of(1), 1, READ);
    table.revoke("r1", "abort");

    assertThat(table.renew("r1", lease.token().value()))
        .isEqualTo(new RenewOutcome.Ignored(Rejection.ALREADY_ENDED));
  }

  @Test
  void renewalAfterDeadlineDoesNotReviveTheLease() {
    Lease lease = table.grant("r1", List.of(1), 1, READ);
    clock.advance(LEASE.plusSeconds(1));

    assertThat(table.renew("r1", lease.token().value()))
        .isEqualTo(new RenewOutcome.Ignored(Rejection.EXPIRED));
    assertThat(ends).singleElement().extracting(LeaseEnd::reason).isEqualTo(EndReason.EXPIRED);
  }

  @Test
  void revokeEndsLeaseAsRevokedOnce() {
    table.grant("r1", List.of(1), 1, READ);

    assertThat(table.revoke("r1", "client went away"))
        .map(LeaseEnd::reason)
        .contains(EndReason.REVOKED);
    assertThat(table.revoke("r1", "again")).isEmpty();
    assertThat(ends).hasSize(1);
  }

  @Test
  void revokeAllEndsEveryLiveLease() {
    table.grant("a", List.of(1), 1, READ);
    table.grant("b", List.of(2), 1, READ);

    assertThat(table.revokeAll("shutdown")).hasSize(2);
    assertThat(table.size()).isZero();
    assertThat(ends).extracting(LeaseEnd::reason).containsOnly(EndReason.REVOKED);
  }

  @Test
  void aLeaseThatWasReadNeverExpiresLater() {
    Lease lease = table.grant("r1", List.of(1), 1, READ);
    confirmed("r1", lease, "d0");
    table.acknowledge("r1", lease.token().value(), claim("d0", READ));
    clock.advance(MAX_LIFETIME.multipliedBy(2));

    assertThat(table.expire()).isEmpty();
    assertThat(ends).hasSize(1);
  }

  @Test
  void soonestDeadlineFollowsTheHeadOfTheExpiryOrder() {
    assertThat(table.soonestDeadline()).isEmpty();
    Lease first = table.grant("a", List.of(1), 1, READ);
    clock.advance(Duration.ofSeconds(1));
    table.grant("b", List.of(2), 1, READ);

    assertThat(table.soonestDeadline()).contains(first.deadlineNanos());
  }

  @Test
  void requestIdMayBeLeasedAgainAfterItsLeaseEnded() {
    table.grant("r1", List.of(1), 1, READ);
    table.revoke("r1", "abort");

    Lease again = table.grant("r1", List.of(7), 1, READ);

    assertThat(table.find("r1")).contains(again);
  }

  @Test
  void termsRejectLifetimeShorterThanDuration() {
    assertThatThrownBy(() -> new LeaseTerms(Duration.ofSeconds(30), Duration.ofSeconds(10)))
        .isInstanceOf(InvalidLeaseTermsException.class)
        .hasMessage("lease max lifetime (10s) must be at least the lease duration (30s)");
  }

  @Test
  void tokenToStringDoesNotRevealTheSecret() {
    LeaseToken token = LeaseToken.random();

    assertThat(token.toString()).doesNotContain(token.value());
  }

  @Test
  void listenerSeesEachGrantAsReturned() {
    Lease lease = table.grant("r1", List.of(1), 1, READ);

    assertThat(grants).containsExactly(lease);
  }

  @Test
  void listenerSeesARenewalThatMovesTheDeadlineWithTheNewDeadline() {
    Lease lease = table.grant("r1", List.of(1), 1, READ);
    clock.advance(Duration.ofSeconds(20));

    table.renew("r1", lease.token().value());

    assertThat(renewals)
        .singleElement()
        .extracting(Lease::deadlineNanos)
        .isEqualTo(clock.nanoTime() + LEASE.toNanos());
  }

  @Test
  void renewalThatDoesNotMoveTheDeadlineIsNotReportedToTheListener() {
    Lease lease = table.grant("r1", List.of(1), 1, READ);

    RenewOutcome outcome = table.renew("r1", lease.token().value());

    assertThat(((RenewOutcome.Renewed) outcome).deadlineNanos()).isEqualTo(lease.deadlineNanos());
    assertThat(renewals).isEmpty();
  }

  @Test
  void renewalExactlyAtTheDeadlineIsTooLate() {
    Lease lease = table.grant("r1", List.of(1), 1, READ);
    clock.advance(LEASE);

    assertThat(table.renew("r1", lease.token().value()))
        .isEqualTo(new RenewOutcome.Ignored(Rejection.EXPIRED));
    assertThat(table.isLive("r1")).isFalse();
  }

  @Test
  void renewalOfAnUnknownRequestIsIgnoredAsUnknown() {
    assertThat(table.renew("nope", LeaseToken.random().value()))
        .isEqualTo(new RenewOutcome.Ignored(Rejection.UNKNOWN_LEASE));
  }

  @Test
  void confirmationOfTheGrantedReadRenewsTheLease() {
    Lease lease = table.grant("r1", List.of(1), 1, READ);
    clock.advance(Duration.ofSeconds(20));

    RenewOutcome outcome = table.confirm("r1", lease.token().value(), claim("d0", READ));

    assertThat(((RenewOutcome.Renewed) outcome).deadlineNanos())
        .isEqualTo(clock.nanoTime() + LEASE.toNanos());
  }

  @Test
  void confirmationOfAnotherReadIsRefusedAsWrongBlocksAndLeavesTheDeadline() {
    Lease lease = table.grant("r1", List.of(1), 1, READ);
    clock.advance(Duration.ofSeconds(20));

    RenewOutcome outcome = table.confirm("r1", lease.token().value(), claim("d0", digest(2)));

    assertThat(outcome).isEqualTo(new RenewOutcome.Ignored(Rejection.WRONG_BLOCKS));
    assertThat(table.find("r1").orElseThrow().deadlineNanos()).isEqualTo(lease.deadlineNanos());
  }

  @Test
  void confirmationWithAWrongTokenIsRefusedForTheTokenWhateverItClaims() {
    table.grant("r1", List.of(1), 1, READ);

    assertThat(table.confirm("r1", LeaseToken.random().value(), claim("d0", digest(2))))
        .isEqualTo(new RenewOutcome.Ignored(Rejection.WRONG_TOKEN));
    assertThat(table.confirm("nope", LeaseToken.random().value(), claim("d0", digest(2))))
        .isEqualTo(new RenewOutcome.Ignored(Rejection.UNKNOWN_LEASE));
  }

  @Test
  void releaseWithTheRightTokenEndsTheLeaseAsReleasedWithItsDetail() {
    Lease lease = table.grant("r1", List.of(1), 1, READ);
    clock.advance(Duration.ofSeconds(3));

    ReleaseOutcome outcome = table.release("r1", lease.token().value(), "prefix hit");

    LeaseEnd end = ((ReleaseOutcome.Released) outcome).end();
    assertThat(end.reason()).isEqualTo(EndReason.RELEASED);
    assertThat(end.detail()).isEqualTo("prefix hit");
    assertThat(end.lease().requestId()).isEqualTo("r1");
    assertThat(ends).containsExactly(end);
    assertThat(table.isLive("r1")).isFalse();
  }

  @Test
  void releaseWithAWrongTokenOrOfAnEndedLeaseEndsNothing() {
    Lease lease = table.grant("r1", List.of(1), 1, READ);

    assertThat(table.release("r1", LeaseToken.random().value(), "x"))
        .isEqualTo(new ReleaseOutcome.Refused(Rejection.WRONG_TOKEN));
    assertThat(table.isLive("r1")).isTrue();
    table.revoke("r1", "abort");
    assertThat(table.release("r1", lease.token().value(), "x"))
        .isEqualTo(new ReleaseOutcome.Refused(Rejection.ALREADY_ENDED));
    assertThat(ends).hasSize(1);
  }

  @Test
  void isLiveOnlyWhileTheLeaseHasNotEnded() {
    assertThat(table.isLive("r1")).isFalse();
    table.grant("r1", List.of(1), 1, READ);
    assertThat(table.isLive("r1")).isTrue();
    table.revoke("r1", "abort");
    assertThat(table.isLive("r1")).isFalse();
  }

  @Test
  void leasesWithTheSameDeadlineExpireInTheOrderTheyWereGranted() {
    for (String id : List.of("a", "b", "c", "d")) {
      table.grant(id, List.of(1), 1, READ);
    }
    clock.advance(LEASE);

    assertThat(table.expire())
        .extracting(e -> e.lease().requestId())
        .containsExactly("a", "b", "c", "d");
  }

  @Test
  void onlyTheAcknowledgementsStillMissingAreReportedAsRemaining() {
    Lease lease = table.grant("r1", List.of(1), 3, READ);
    confirmed("r1", lease, "d0");

    AckOutcome first = table.acknowledge("r1", lease.token().value(), claim("d0", READ));
    AckOutcome again = table.acknowledge("r1", lease.token().value(), claim("d0", READ));

    assertThat(((AckOutcome.Partial) first).remaining()).isEqualTo(2);
    assertThat(((AckOutcome.Refused) again).reason()).isEqualTo(Rejection.ALREADY_ENDED);
    assertThat(table.find("r1")).get().extracting(Lease::acksReceived).isEqualTo(1);
  }

  @Test
  void onlyARefusedAcknowledgementForbidsUsingTheRead() {
    Lease lease = table.grant("r1", List.of(1), 2, READ);
    String token = lease.token().value();
    for (String consumer : List.of("d0", "d1")) {
      confirmed("r1", lease, consumer);
    }

    assertThat(table.acknowledge("r1", token, claim("d0", READ)).accepted()).isTrue();
    assertThat(table.acknowledge("r1", token, claim("d1", READ)).accepted()).isTrue();
    assertThat(table.acknowledge("r1", token, claim("d2", READ)).accepted()).isFalse();
  }

  @Test
  void theLastEndedLeasesAreRememberedAsEndedUpToTheCapacity() {
    String firstToken = table.grant("r0", List.of(1), 1, READ).token().value();
    table.revoke("r0", "abort");
    for (int i = 1; i < LeaseTable.RECENTLY_ENDED_CAPACITY; i++) {
      table.grant("r" + i, List.of(1), 1, READ);
      table.revoke("r" + i, "abort");
    }

    assertThat(table.renew("r0", firstToken))
        .isEqualTo(new RenewOutcome.Ignored(Rejection.ALREADY_ENDED));
    table.grant("one-more", List.of(1), 1, READ);
    table.revoke("one-more", "abort");
    assertThat(table.renew("r0", firstToken))
        .isEqualTo(new RenewOutcome.Ignored(Rejection.UNKNOWN_LEASE));
  }

  @Test
  void termsAcceptALifetimeOfExactlyOneLease() {
    LeaseTerms terms = new LeaseTerms(Duration.ofSeconds(30), Duration.ofSeconds(30));

    assertThat(terms.maxLifetime()).isEqualTo(terms.duration());
  }

  @Test
  void termsRejectANonPositiveLifetimeAsNotPositive() {
    assertThatThrownBy(() -> new LeaseTerms(Duration.ofSeconds(30), Duration.ZERO))
        .isInstanceOf(InvalidLeaseTermsException.class)
        .hasMessage("lease max lifetime (0s) must be positive, e.g. 5s or 500ms");
    assertThatThrownBy(() -> new LeaseTerms(Duration.ofSeconds(-1), Duration.ofSeconds(30)))
        .isInstanceOf(InvalidLeaseTermsException.class)
        .hasMessageStartingWith("lease duration (");
  }

  @Test
  void tokenToStringShowsAPrefixToTellTokensApartInLogs() {
    LeaseToken token = LeaseToken.random();

    assertThat(token.toString()).startsWith(token.value().substring(0, 6));
  }

  @Test
  void aLeaseReadByItsLastConsumerEndsNamingThatConsumer() {
    for (String id : List.of("r1", "r2")) {
      Lease lease = table.grant(id, List.of(1), 1, READ);
      confirmed(id, lease, "decode-7");
      table.acknowledge(id, lease.token().value(), claim("decode-7", READ));
    }
    Lease third = table.grant("r3", List.of(1), 2, READ);
    confirmed("r3", third, "decode-7");
    confirmed("r3", third, "decode-8");
    table.acknowledge("r3", third.token().value(), claim("decode-7", READ));
    table.acknowledge("r3", third.token().value(), claim("decode-8", READ));

    assertThat(ends)
        .extracting(LeaseEnd::detail)
        .containsExactly("read by decode-7", "read by decode-7", "read by decode-8");
  }

  @Test
  void leasesReadByHundredsOfConsumersEachNameTheirOwn() {
    for (int i = 0; i < 600; i++) {
      String consumer = "decode-" + (i % 300);
      Lease lease = table.grant("r" + i, List.of(1), 1, READ);
      confirmed("r" + i, lease, consumer);
      table.acknowledge("r" + i, lease.token().value(), claim(consumer, READ));

      assertThat(ends.get(i).detail()).isEqualTo("read by " + consumer);
    }
  }

  @Test
  void aLeaseWaitingForMoreConsumersThanAHandfulCountsEachOnce() {
    Lease lease = table.grant("r1", List.of(1), 12, READ);
    String token = lease.token().value();

    for (int i = 0; i < 12; i++) {
      confirmed("r1", lease, "d" + i);
    }

    for (int i = 0; i < 11; i++) {
      assertThat(table.acknowledge("r1", token, claim("d" + i, READ)))
          .isEqualTo(new AckOutcome.Partial(11 - i));
      assertThat(table.acknowledge("r1", token, claim("d" + i, READ)))
          .isEqualTo(new AckOutcome.Refused(Rejection.ALREADY_ENDED, Optional.empty()));
    }
    assertThat(table.find("r1")).get().extracting(Lease::acksReceived).isEqualTo(11);

    assertThat(table.acknowledge("r1", token, claim("d11", READ)))
        .isInstanceOf(AckOutcome.Read.class);
  }

  @Test
  void expireReturnsExactlyTheEndsItCausedAndNothingWhenNoLeaseIsDue() {
    assertThat(table.expire()).isEmpty();
    table.grant("a", List.of(1), 1, READ);
    table.grant("b", List.of(2), 1, READ);
    assertThat(table.expire()).isEmpty();
    clock.advance(LEASE);

    List<LeaseEnd> expired = table.expire();

    assertThat(expired).isEqualTo(ends).hasSize(2);
    assertThat(expired).extracting(LeaseEnd::detail).containsOnly("not read before the deadline");
  }

  @Test
  void aLeaseSnapshotKeepsItsOwnCopyOfTheBlockList() {
    List<Integer> blocks = new ArrayList<>(List.of(3, 4));
    Lease lease = new Lease("r1", LeaseToken.random(), blocks, 0, 1, 2, 1, 0);

    blocks.set(0, 9);
    blocks.add(5);

    assertThat(lease.blockIds()).containsExactly(3, 4);
    assertThatThrownBy(() -> lease.blockIds().set(0, 9))
        .isInstanceOf(UnsupportedOperationException.class);
    Lease copy = new Lease("r1", lease.token(), lease.blockIds(), 0, 1, 2, 1, 1);
    assertThat(copy.blockIds()).isEqualTo(lease.blockIds());
  }

  @Test
  void aLateMessageForAnIdLeasedAgainIsRefusedForItsTokenAndAfterTheNewLeaseEndsAsEnded() {
    String oldToken = table.grant("r1", List.of(1), 1, READ).token().value();
    table.revoke("r1", "abort");
    Lease again = table.grant("r1", List.of(7), 1, READ);

    assertThat(table.renew("r1", oldToken))
        .isEqualTo(new RenewOutcome.Ignored(Rejection.WRONG_TOKEN));
    table.release("r1", again.token().value(), "done");
    assertThat(table.renew("r1", oldToken))
        .isEqualTo(new RenewOutcome.Ignored(Rejection.ALREADY_ENDED));
  }

  @Test
  void aListenerReadingViewsLearnsTheSameFactsAsOneKeepingSnapshots() {
    List<Object> read = new ArrayList<>();
    List<Object> kept = new ArrayList<>();
    LeaseTable viewed =
        new LeaseTable(
            clock,
            new LeaseTerms(LEASE, MAX_LIFETIME),
            new LeaseListener() {
              @Override
              public void renewed(LeaseView lease) {
                read.add(factsOf(lease));
                LeaseListener.super.renewed(lease);
              }

              @Override
              public void ended(LeaseEndView end) {
                read.add(
                    new LeaseEnd(
                        factsOf(end.lease()), end.reason(), end.endedAtNanos(), end.detail()));
                LeaseListener.super.ended(end);
              }

              @Override
              public void renewed(Lease lease) {
                kept.add(lease);
              }

              @Override
              public void ended(LeaseEnd end) {
                kept.add(end);
              }
            });
    List<Object> expected = new ArrayList<>();

    long grantedAt = clock.nanoTime();
    Lease first = viewed.grant("r1", List.of(4, 2), 2, READ);
    String token = first.token().value();
    clock.advance(Duration.ofSeconds(10));
    viewed.renew("r1", token);
    long renewedTo = clock.nanoTime() + LEASE.toNanos();
    Lease renewed =
        new Lease(
            "r1",
            first.token(),
            List.of(4, 2),
            grantedAt,
            renewedTo,
            first.maxDeadlineNanos(),
            2,
            0);
    expected.add(renewed);
    clock.advance(Duration.ofSeconds(10));
    viewed.confirm("r1", token, claim("d0", READ));
    viewed.confirm("r1", token, claim("d1", READ));
    long confirmedTo = clock.nanoTime() + LEASE.toNanos();
    expected.add(
        new Lease(
            "r1",
            first.token(),
            List.of(4, 2),
            grantedAt,
            confirmedTo,
            first.maxDeadlineNanos(),
            2,
            0));
    viewed.acknowledge("r1", token, claim("d0", READ));
    viewed.acknowledge("r1", token, claim("d1", READ));
    expected.add(
        new LeaseEnd(
            new Lease(
                "r1",
                first.token(),
                List.of(4, 2),
                grantedAt,
                confirmedTo,
                first.maxDeadlineNanos(),
                2,
                2),
            EndReason.READ,
            clock.nanoTime(),
            "read by d1"));
    Lease released = viewed.grant("r2", List.of(5), 1, READ);
    expected.add(
        ((ReleaseOutcome.Released) viewed.release("r2", released.token().value(), "held already"))
            .end());
    viewed.grant("r3", List.of(6), 1, READ);
    expected.add(viewed.revoke("r3", "aborted").orElseThrow());
    Lease late = viewed.grant("r4", List.of(7), 1, READ);
    viewed.confirm("r4", late.token().value(), claim("d0", READ));
    clock.advance(LEASE);
    AckOutcome tooLate = viewed.acknowledge("r4", late.token().value(), claim("d0", READ));
    expected.add(((AckOutcome.Refused) tooLate).expiredNow().orElseThrow());
    Lease unrenewed = viewed.grant("r5", List.of(8), 1, READ);
    clock.advance(LEASE);
    viewed.renew("r5", unrenewed.token().value());
    expected.add(
        new LeaseEnd(
            unrenewed,
            EndReason.EXPIRED,
            clock.nanoTime(),
            "deadline passed before the renewal arrived"));
    viewed.grant("r6", List.of(9), 1, READ);
    clock.advance(LEASE);
    expected.addAll(viewed.expire());

    assertThat(read).isEqualTo(kept).isEqualTo(expected);
  }

  @Test
  void aViewIsValidOnlyDuringTheListenerCallThatReceivedIt() {
    List<LeaseView> renewedViews = new ArrayList<>();
    List<LeaseEndView> endViews = new ArrayList<>();
    List<String> readDuringTheCall = new ArrayList<>();
    LeaseTable viewed =
        new LeaseTable(
            clock,
            new LeaseTerms(LEASE, MAX_LIFETIME),
            new LeaseListener() {
              @Override
              public void renewed(LeaseView lease) {
                readDuringTheCall.add(lease.requestId());
                renewedViews.add(lease);
              }

              @Override
              public void ended(LeaseEndView end) {
                readDuringTheCall.add(end.lease().requestId() + " " + end.reason());
                endViews.add(end);
              }
            });
    Lease lease = viewed.grant("r1", List.of(1), 1, READ);
    clock.advance(Duration.ofSeconds(1));
    viewed.renew("r1", lease.token().value());
    viewed.revoke("r1", "aborted");

    assertThat(readDuringTheCall).containsExactly("r1", "r1 REVOKED");
    LeaseView keptRenewal = renewedViews.get(0);
    LeaseEndView keptEnd = endViews.get(0);
    assertThatThrownBy(keptRenewal::deadlineNanos)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("valid only during the listener call");
    assertThatThrownBy(keptRenewal::snapshot).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(keptEnd::reason).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(keptEnd::lease).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(keptEnd::snapshot).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void aViewIsClosedEvenWhenTheListenerThrows() {
    List<LeaseEndView> endViews = new ArrayList<>();
    LeaseTable viewed =
        new LeaseTable(
            clock,
            new LeaseTerms(LEASE, MAX_LIFETIME),
            new LeaseListener() {
              @Override
              public void ended(LeaseEndView end) {
                endViews.add(end);
                throw new IllegalArgumentException("listener failed");
              }
            });
    viewed.grant("r1", List.of(1), 1, READ);

    assertThatThrownBy(() -> viewed.revoke("r1", "aborted"))
        .isInstanceOf(IllegalArgumentException.class);

    assertThat(viewed.isLive("r1")).isFalse();
    assertThatThrownBy(endViews.get(0)::detail).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void aCodedRenewalIsTheNewDeadline() {
    Lease lease = table.grant("r1", List.of(1), 1, READ);
    clock.advance(Duration.ofSeconds(20));

    long code = table.renewDeadline("r1", lease.token().value());

    assertThat(RenewOutcome.isRenewed(code)).isTrue();
    assertThat(code).isEqualTo(clock.nanoTime() + LEASE.toNanos());
    assertThat(table.find("r1")).get().extracting(Lease::deadlineNanos).isEqualTo(code);
    assertThat(RenewOutcome.of(code)).isEqualTo(new RenewOutcome.Renewed(code));
    assertThatThrownBy(() -> RenewOutcome.rejection(code))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void aCodedRefusalNamesItsRejection() {
    Lease lease = table.grant("r1", List.of(1), 1, READ);

    long wrongToken = table.renewDeadline("r1", LeaseToken.random().value());
    long unknown = table.renewDeadline("r2", lease.token().value());
    clock.advance(LEASE);
    long expired = table.renewDeadline("r1", lease.token().value());
    long ended = table.renewDeadline("r1", lease.token().value());

    assertThat(List.of(wrongToken, unknown, expired, ended))
        .noneMatch(RenewOutcome::isRenewed)
        .extracting(RenewOutcome::rejection)
        .containsExactly(
            Rejection.WRONG_TOKEN,
            Rejection.UNKNOWN_LEASE,
            Rejection.EXPIRED,
            Rejection.ALREADY_ENDED);
    assertThat(RenewOutcome.of(expired)).isEqualTo(new RenewOutcome.Ignored(Rejection.EXPIRED));
  }

  @Test
  void noDeadlineReadsAsACodedRefusalEvenOnAClockAtItsLowestValue() {
    ManualClock lowest = new ManualClock(Long.MIN_VALUE);
    LeaseTable early =
        new LeaseTable(
            lowest, new LeaseTerms(Duration.ofNanos(1), Duration.ofNanos(1)), LeaseListener.NONE);
    Lease lease = early.grant("r1", List.of(1), 1, READ);

    long code = early.renewDeadline("r1", lease.token().value());

    assertThat(RenewOutcome.isRenewed(code)).isTrue();
    assertThat(code).isEqualTo(lease.deadlineNanos()).isGreaterThan(Long.MIN_VALUE);
    assertThat(lease.maxDeadlineNanos()).isGreaterThanOrEqualTo(lease.deadlineNanos());
  }

  @Test
  void aLeaseWaitingForMoreConsumersThanEverCountsEachRemainingOne() {
    Lease lease = table.grant("r1", List.of(1), 100, READ);
    String token = lease.token().value();
    for (int i = 0; i < 100; i++) {
      confirmed("r1", lease, "d" + i);
    }

    for (int i = 0; i < 99; i++) {
      assertThat(table.acknowledge("r1", token, claim("d" + i, READ)))
          .isEqualTo(new AckOutcome.Partial(99 - i));
    }
    assertThat(table.acknowledge("r1", token, claim("d99", READ))).isEqualTo(new AckOutcome.Read());
    assertThat(ends).singleElement().extracting(LeaseEnd::reason).isEqualTo(EndReason.READ);
  }

  /** What {@code lease} shows, read accessor by accessor. */
  private static Lease factsOf(LeaseView lease) {
    return new Lease(
        lease.requestId(),
        lease.token(),
        lease.blockIds(),
        lease.grantedAtNanos(),
        lease.deadlineNanos(),
        lease.maxDeadlineNanos(),
        lease.acksRequired(),
        lease.acksReceived());
  }

  private static byte[] digest(int seed) {
    byte[] digest = new byte[32];
    Arrays.fill(digest, (byte) seed);
    return digest;
  }

  /** {@code consumer} confirms it reads {@code lease} as granted, skipping nothing. */
  private void confirmed(String requestId, Lease lease, String consumer) {
    assertThat(table.confirm(requestId, lease.token().value(), claim(consumer, READ)))
        .isInstanceOf(RenewOutcome.Renewed.class);
  }

  /**
   * What {@code consumer} claims it read, skipping nothing: a lease granted with exactly {@code
   * binding} (the claim's digest is the binding itself).
   */
  private static ReadClaim claim(String consumer, byte[] binding) {
    return claim(consumer, binding, 0);
  }

  /** {@link #claim(String, byte[])} skipping {@code skipTokens} tokens. */
  private static ReadClaim claim(String consumer, byte[] binding, int skipTokens) {
    return new ReadClaim(consumer, binding, skipTokens, granted -> Arrays.equals(granted, binding));
  }
}
