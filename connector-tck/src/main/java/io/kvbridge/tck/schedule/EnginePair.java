package io.kvbridge.tck.schedule;

import static org.awaitility.Awaitility.await;

import io.kvbridge.tck.faults.Faults;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * P and D through their restarts: the current start of each, the killed starts of D (whose agents
 * are dead, but whose connectors are closed only at the end), and the stepping of both until
 * nothing is in flight between them (at once on a synchronous transport; waiting, bounded by the
 * patience, on an asynchronous one). P may fall silent: it then neither sweeps nor steps, and so
 * frees nothing, until it runs again.
 *
 * <p>Confined to the thread that runs the simulation.
 */
final class EnginePair implements AutoCloseable {

  static final Duration SWEEP = Duration.ofMillis(500);
  private static final int IMMEDIATE_STEPS = 4;

  private final Supplier<ProducerEngine> producers;
  private final Function<String, DecoderEngine> decoders;
  private final Faults faults;
  private final Duration patience;
  private final List<DecoderEngine> deadDecoders = new ArrayList<>();
  private ProducerEngine producer;
  private DecoderEngine decoder;
  private int decoderGeneration;
  private boolean producerSilent;

  /**
   * Starts P, then D.
   *
   * @param producers starts P
   * @param decoders starts D under the engine id it is given
   * @param faults the group every agent of either engine joins
   * @param patience how long the engines may take to settle on an asynchronous transport
   */
  EnginePair(
      Supplier<ProducerEngine> producers,
      Function<String, DecoderEngine> decoders,
      Faults faults,
      Duration patience) {
    this.producers = producers;
    this.decoders = decoders;
    this.faults = faults;
    this.patience = patience;
    this.producer = producers.get();
    this.decoder = decoders.apply(decoderId());
  }

  ProducerEngine producer() {
    return producer;
  }

  DecoderEngine decoder() {
    return decoder;
  }

  /** D's current engine id: a killed D comes back under a new one. */
  String decoderId() {
    return "decode-" + decoderGeneration;
  }

  /**
   * P's process ends and a new one starts under the same engine id; the old one's held blocks
   * vanish with its memory: neither leaked nor freed.
   */
  void restartProducer(boolean graceful) {
    ProducerEngine old = producer;
    if (!graceful) {
      old.agentNames().forEach(faults::kill);
    }
    old.close();
    producer = producers.get();
  }

  /** D's process ends, gracefully or killed, and a new one starts under the same engine id. */
  void restartDecoder(boolean graceful) {
    endDecoder(graceful);
    decoder = decoders.apply(decoderId());
  }

  /** D's process is killed, and a new one starts under a new engine id. */
  void killDecoder() {
    endDecoder(false);
    decoderGeneration++;
    decoder = decoders.apply(decoderId());
  }

  private void endDecoder(boolean graceful) {
    DecoderEngine old = decoder;
    if (graceful) {
      old.close();
    } else {
      old.agentNames().forEach(faults::kill);
      deadDecoders.add(old);
    }
  }

  void silenceProducer(boolean silent) {
    producerSilent = silent;
  }

  /**
   * The sweeps that are due, which also send the heartbeats that are due, and the next layer of
   * every request P streams; none of P's while it is silent.
   */
  void sweep() {
    if (!producerSilent) {
      producer.computeNextLayers();
      producer.sweep();
    }
    decoder.sweep();
  }

  /** P holds nothing past its maximum lifetime plus one sweep, unless it is silent. */
  void checkProducerHoldsNothingTooLong() {
    if (!producerSilent) {
      producer.checkNothingHeldTooLong();
    }
  }

  /**
   * Steps both engines until nothing is in flight between them. A synchronous transport settles
   * within a few steps; an asynchronous one is polled, within the patience, as its progress thread
   * moves bytes and messages. A load confirmed by the last step is allocated at the next one, as by
   * an engine that keeps stepping: while D still asks about a request, one more step follows.
   */
  void settle() {
    awaitQuiet();
    if (decoder.stillAsking()) {
      step();
      awaitQuiet();
    }
  }

  private void awaitQuiet() {
    for (int i = 0; i < IMMEDIATE_STEPS; i++) {
      step();
      if (quiet()) {
        return;
      }
    }
    await("engines settle")
        .atMost(patience)
        .pollInSameThread()
        .pollDelay(Duration.ZERO)
        .pollInterval(Duration.ofMillis(1))
        .until(
            () -> {
              step();
              return quiet();
            });
  }

  /**
   * Whether nothing moves; what waits for a silent P to drain it does not count (D's messages go to
   * P's lead rank, the only one that drains any).
   */
  private boolean quiet() {
    return producerSilent ? faults.quietExceptTowards(ProducerEngine.ID) : faults.quiet();
  }

  private void step() {
    if (!producerSilent) {
      producer.step();
    }
    decoder.step();
  }

  /** Both engines' requests ended and every block of either is back in its pool. */
  void checkEverythingEnded() {
    producer.checkEverythingEnded();
    decoder.checkEverythingEnded();
  }

  @Override
  public void close() {
    producer.close();
    decoder.close();
    deadDecoders.forEach(DecoderEngine::close);
  }
}
