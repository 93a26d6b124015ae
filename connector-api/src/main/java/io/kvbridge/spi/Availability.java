package io.kvbridge.spi;

import java.util.Optional;

/** Whether a connector can run on this machine, and if not, why. */
public sealed interface Availability {

  /** The connector can run here. */
  static Availability available() {
    return new Available();
  }

  /** The connector cannot run here; {@code reason} says why and how to fix it. */
  static Availability unavailable(String reason, Throwable cause) {
    return new Unavailable(reason, Optional.ofNullable(cause));
  }

  /** The connector can run here. */
  record Available() implements Availability {}

  /**
   * The connector cannot run here.
   *
   * @param reason what is missing and how to install or configure it
   * @param cause the root failure, e.g. the {@link UnsatisfiedLinkError} of a native library
   */
  record Unavailable(String reason, Optional<Throwable> cause) implements Availability {}
}
