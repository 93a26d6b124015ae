package io.kvbridge.runtime.consumer;

import java.util.ArrayDeque;
import java.util.Deque;

/**
 * This consumer's estimate of one producer's clock, healed by every exchange: the handshake, each
 * confirmation and each renewal answer is a sample ({@link ClockOffset#estimate}), and the estimate
 * in use is the sample with the smallest uncertainty (the shortest round trip) among the recent
 * ones. One slow exchange therefore never makes leases look shorter than the best recent exchange
 * allows, and an estimate ages out, so a drifting clock is followed.
 *
 * <p>Threads: every method may be called from any thread (each is synchronized; they are cheap).
 */
final class ClockSync {

  /** How long a sample is trusted. */
  static final long WINDOW_NANOS = 10L * 60 * 1_000_000_000;

  /** How many recent samples are kept. */
  static final int MAX_SAMPLES = 64;

  private final Deque<Sample> samples = new ArrayDeque<>();
  private ClockOffset best;

  /** Starts from the handshake's sample, taken at {@code at} on the consumer's clock. */
  ClockSync(ClockOffset first, long at) {
    samples.add(new Sample(first, at));
    best = first;
  }

  /** Adds the sample of one exchange; {@code localReceived} is also when it was taken. */
  synchronized void offer(long localSent, long remoteSample, long localReceived) {
    if (localReceived < localSent) {
      return; // an echo that does not belong to a request of ours
    }
    samples.addLast(
        new Sample(ClockOffset.estimate(localSent, remoteSample, localReceived), localReceived));
    while (samples.size() > MAX_SAMPLES
        || (samples.size() > 1 && localReceived - samples.peekFirst().at > WINDOW_NANOS)) {
      samples.removeFirst();
    }
    best = samples.stream().map(Sample::offset).reduce(ClockSync::better).orElseThrow();
  }

  /** The estimate in use. */
  synchronized ClockOffset current() {
    return best;
  }

  private static ClockOffset better(ClockOffset a, ClockOffset b) {
    return b.uncertaintyNanos() < a.uncertaintyNanos() ? b : a;
  }

  private record Sample(ClockOffset offset, long at) {}
}
