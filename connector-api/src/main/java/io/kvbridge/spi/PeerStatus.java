package io.kvbridge.spi;

/**
 * A producer a consumer completed a handshake with, as its {@link ConsumerStatus} shows it.
 *
 * @param engineId the producer's engine id
 * @param incarnation which start of the producer answered the handshake
 * @param address where it answered
 * @param clockOffsetNanos how far the producer's monotonic clock is ahead of this engine's
 *     (negative when behind), from the best recent exchange
 * @param clockUncertaintyNanos the largest error of that estimate: half the exchange's round trip;
 *     deadlines are converted erring early by this much
 */
public record PeerStatus(
    String engineId,
    long incarnation,
    String address,
    long clockOffsetNanos,
    long clockUncertaintyNanos) {}
