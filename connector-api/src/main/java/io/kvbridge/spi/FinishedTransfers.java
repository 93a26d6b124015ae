package io.kvbridge.spi;

import java.util.List;
import java.util.Set;

/**
 * What {@link WorkerSide#getFinished} reports for one step.
 *
 * @param doneSending producer requests whose lease ended (read and acknowledged, expired or
 *     revoked): the engine now frees their blocks
 * @param doneReceiving consumer requests whose KV arrived and P acknowledged the read: the engine
 *     may decode them
 * @param failedLoads consumer requests whose load failed: the engine applies its policy
 */
public record FinishedTransfers(
    Set<String> doneSending, Set<String> doneReceiving, List<LoadFailure> failedLoads) {

  /** Nothing finished. */
  public static final FinishedTransfers NONE = new FinishedTransfers(Set.of(), Set.of(), List.of());

  /** Copies the collections. */
  public FinishedTransfers {
    doneSending = Set.copyOf(doneSending);
    doneReceiving = Set.copyOf(doneReceiving);
    failedLoads = List.copyOf(failedLoads);
  }

  /** Whether nothing finished. */
  public boolean isEmpty() {
    return doneSending.isEmpty() && doneReceiving.isEmpty() && failedLoads.isEmpty();
  }
}
