package io.kvbridge.runtime.consumer;

/**
 * How far a producer's monotonic clock is ahead of this consumer's, estimated from one
 * request/response exchange: the producer's sample is assumed taken at the midpoint of the round
 * trip, so the error is at most half the round trip ({@code uncertaintyNanos}).
 *
 * @param offsetNanos producer time minus consumer time
 * @param uncertaintyNanos the largest error of the estimate
 */
public record ClockOffset(long offsetNanos, long uncertaintyNanos) {

  /**
   * Estimates the offset from a round trip.
   *
   * @param localSent consumer clock when the request left
   * @param remoteSample producer clock when it answered
   * @param localReceived consumer clock when the answer arrived
   */
  public static ClockOffset estimate(long localSent, long remoteSample, long localReceived) {
    long roundTrip = Math.max(0, localReceived - localSent);
    long midpoint = localSent + roundTrip / 2;
    return new ClockOffset(remoteSample - midpoint, roundTrip / 2 + 1);
  }

  /**
   * Converts a producer deadline to this consumer's clock, erring early: the result is never later
   * than the true deadline, whatever the error of the estimate.
   */
  public long deadlineToLocal(long remoteDeadline) {
    return remoteDeadline - offsetNanos - uncertaintyNanos;
  }
}
