package io.kvbridge.spi;

import java.util.List;

/**
 * What the scheduler side hands the worker side for one engine step.
 *
 * @param loadsToStart loads to post this step
 */
public record StepMetadata(List<LoadSpec> loadsToStart) {

  /** Copies the list. */
  public StepMetadata {
    loadsToStart = List.copyOf(loadsToStart);
  }
}
