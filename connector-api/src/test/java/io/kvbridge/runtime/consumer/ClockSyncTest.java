package io.kvbridge.runtime.consumer;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ClockSyncTest {

  private static final long MS = 1_000_000L;

  /** The producer's clock runs 5 s ahead of the consumer's. */
  private static final long AHEAD = 5_000 * MS;

  @Test
  void aSlowExchangeAfterAGoodOneDoesNotWidenTheEstimate() {
    ClockSync sync = new ClockSync(sample(0, 2 * MS), 2 * MS);

    // P answered after 4 s: the midpoint may be 2 s off, so this sample is nearly worthless.
    sync.offer(10 * MS, 10 * MS + AHEAD + 3_900 * MS, 4_010 * MS);

    assertThat(sync.current().uncertaintyNanos()).isEqualTo(MS + 1);
    assertThat(sync.current().offsetNanos()).isEqualTo(AHEAD);
  }

  @Test
  void aSlowFirstHandshakeIsHealedByTheNextQuickExchange() {
    // The handshake took 4 s: a lease of P's would look 2 s shorter than it is.
    ClockSync sync = new ClockSync(sample(0, 4_000 * MS), 4_000 * MS);
    long remoteDeadline = 10_000 * MS + AHEAD;
    long before = sync.current().deadlineToLocal(remoteDeadline);

    sync.offer(5_000 * MS, 5_000 * MS + AHEAD + MS, 5_002 * MS);

    assertThat(sync.current().uncertaintyNanos()).isEqualTo(MS + 1);
    assertThat(sync.current().deadlineToLocal(remoteDeadline))
        .isGreaterThan(before + 1_900 * MS)
        .isLessThanOrEqualTo(10_000 * MS);
  }

  @Test
  void theBestSampleAgesOutAndTheBestRecentOneTakesOver() {
    ClockSync sync = new ClockSync(sample(0, 2 * MS), 2 * MS);
    long later = ClockSync.WINDOW_NANOS + 100 * MS;

    // P's clock drifted by 30 ms meanwhile; the only recent sample has a 20 ms round trip.
    sync.offer(later, later + AHEAD + 30 * MS + 10 * MS, later + 20 * MS);

    assertThat(sync.current().offsetNanos()).isEqualTo(AHEAD + 30 * MS);
    assertThat(sync.current().uncertaintyNanos()).isEqualTo(10 * MS + 1);
  }

  @Test
  void anAnswerReceivedBeforeItsRequestWasSentIsNotASample() {
    ClockSync sync = new ClockSync(sample(0, 8 * MS), 8 * MS);

    sync.offer(100 * MS, 100 * MS + AHEAD, 99 * MS);

    assertThat(sync.current()).isEqualTo(sample(0, 8 * MS));
  }

  @Test
  void ofTwoEquallyGoodSamplesTheEarlierOneStays() {
    ClockSync sync = new ClockSync(sample(0, 2 * MS), 2 * MS);

    // As quick a round trip, but P's clock seems 7 ms further ahead.
    sync.offer(10 * MS, 11 * MS + AHEAD + 7 * MS, 12 * MS);

    assertThat(sync.current()).isEqualTo(sample(0, 2 * MS));
  }

  @Test
  void theLatestSixtyFourSamplesAreKept() {
    ClockSync sync = new ClockSync(sample(0, 2 * MS), 2 * MS);
    for (int i = 1; i < ClockSync.MAX_SAMPLES; i++) {
      long sent = i * 100 * MS;
      sync.offer(sent, sent + 2 * MS + AHEAD, sent + 4 * MS);
    }
    assertThat(sync.current()).isEqualTo(sample(0, 2 * MS));

    long sent = ClockSync.MAX_SAMPLES * 100 * MS;
    sync.offer(sent, sent + 2 * MS + AHEAD, sent + 4 * MS);

    assertThat(sync.current().uncertaintyNanos()).isEqualTo(2 * MS + 1);
  }

  @Test
  void aSampleExactlyOneWindowOldIsStillTrusted() {
    ClockSync sync = new ClockSync(sample(0, 2 * MS), 2 * MS);
    long at = 2 * MS + ClockSync.WINDOW_NANOS;

    sync.offer(at - 20 * MS, at - 10 * MS + AHEAD, at);

    assertThat(sync.current()).isEqualTo(sample(0, 2 * MS));
  }

  @Test
  void aSampleLessThanOneWindowOldIsTrustedLateInTheClocksLife() {
    long start = ClockSync.WINDOW_NANOS;
    ClockSync sync = new ClockSync(sample(start, start + 2 * MS), start + 2 * MS);
    long at = start + 60_000 * MS;

    sync.offer(at - 20 * MS, at - 10 * MS + AHEAD, at);

    assertThat(sync.current()).isEqualTo(sample(start, start + 2 * MS));
  }

  /** A handshake sent at {@code sent} and answered at {@code received}, P answering midway. */
  private static ClockOffset sample(long sent, long received) {
    return ClockOffset.estimate(sent, (sent + received) / 2 + AHEAD, received);
  }
}
