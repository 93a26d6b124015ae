package io.kvbridge.transfer;

import java.time.Duration;
import java.util.Objects;

/**
 * What a transport measured of one finished transfer, as {@link Transport#telemetry} reports it: a
 * transport's own view of the data plane, beside what the protocol times around it (NIXL's agent
 * measures this when it was created to capture telemetry).
 *
 * @param postTime how long posting the transfer took, as the transport timed it
 * @param transferTime how long the transfer took to finish, as the transport timed it
 * @param bytes the bytes the transfer moved
 * @param descriptors the pieces the transfer moved
 */
public record TransferTelemetry(
    Duration postTime, Duration transferTime, long bytes, int descriptors) {

  /**
   * Checks the values.
   *
   * @throws IllegalArgumentException if a time, the bytes or the descriptors are negative
   */
  public TransferTelemetry {
    Objects.requireNonNull(postTime, "postTime");
    Objects.requireNonNull(transferTime, "transferTime");
    if (postTime.isNegative() || transferTime.isNegative()) {
      throw new IllegalArgumentException(
          "transfer times must not be negative: post " + postTime + ", transfer " + transferTime);
    }
    if (bytes < 0 || descriptors < 0) {
      throw new IllegalArgumentException(
          "bytes (" + bytes + ") and descriptors (" + descriptors + ") must not be negative");
    }
  }
}
