package io.kvbridge.tck.schedule;

import io.kvbridge.time.ManualClock;
import io.kvbridge.time.MonotonicClock;
import java.time.Duration;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * P's clock, and through it the count of handshakes P answered. P answers handshakes in this JVM,
 * on the thread of the consumer that asks, and reads its clock once in each answer; nothing else of
 * P's reads it while D's engine is inside its connector. So such a read is P answering a handshake:
 * that is how handshakes are counted, and how one is made slow (the clock runs on while P answers).
 *
 * <p>D's engine marks its calls into its connector, and a slow handshake is armed, on the thread
 * that runs the simulation.
 */
final class ProducerClock implements MonotonicClock {

  private final ManualClock clock;
  private final Consumer<String> slowHandshakeAnswered;
  private boolean insideDecoder; // D's engine is inside a call into its connector
  private int handshakesAnswered;
  private Duration slowHandshake; // how long P's answer to the next handshake takes, if armed

  /**
   * @param clock simulated time, which P's clock reads
   * @param slowHandshakeAnswered told what happened when P answered an armed slow handshake
   */
  ProducerClock(ManualClock clock, Consumer<String> slowHandshakeAnswered) {
    this.clock = clock;
    this.slowHandshakeAnswered = slowHandshakeAnswered;
  }

  @Override
  public long nanoTime() {
    if (insideDecoder) {
      handshakesAnswered++;
      if (slowHandshake != null) {
        clock.advance(slowHandshake);
        slowHandshakeAnswered.accept("a handshake that took " + slowHandshake.toMillis() + " ms");
        slowHandshake = null;
      }
    }
    return clock.nanoTime();
  }

  /** Runs a call of D's engine into its connector, marked as such (calls may nest). */
  <T> T duringDecoderCall(Supplier<T> call) {
    boolean outer = insideDecoder;
    insideDecoder = true;
    try {
      return call.get();
    } finally {
      insideDecoder = outer;
    }
  }

  /** P's answer to the next handshake takes {@code duration} of simulated time. */
  void armSlowHandshake(Duration duration) {
    slowHandshake = duration;
  }

  void disarmSlowHandshake() {
    slowHandshake = null;
  }

  boolean slowHandshakeArmed() {
    return slowHandshake != null;
  }

  /** The handshakes P answered so far, over every start of either engine. */
  int handshakesAnswered() {
    return handshakesAnswered;
  }
}
