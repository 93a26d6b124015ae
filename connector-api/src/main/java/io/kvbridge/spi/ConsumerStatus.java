package io.kvbridge.spi;

import java.util.List;

/**
 * The consumer's part of a {@link ConnectorStatus}: the loads this engine runs and the producers it
 * completed a handshake with.
 *
 * @param loadsInFlight loads accepted and not yet received or failed, from confirmation to the
 *     producer's ACK
 * @param readsCompleted reads the producer validated (ACK)
 * @param bytesRead bytes of those reads
 * @param loadsFailed loads that failed; the engine applied its load-failure policy to each
 * @param renewalsConfirmed lease renewals producers confirmed to this engine
 * @param stagingBytesInUse bytes of the ranks' staging areas that staged reads hold now (0 when
 *     none is posted or no area was allocated)
 * @param producers the producers this engine completed a handshake with, sorted by engine id
 */
public record ConsumerStatus(
    int loadsInFlight,
    long readsCompleted,
    long bytesRead,
    long loadsFailed,
    long renewalsConfirmed,
    long stagingBytesInUse,
    List<PeerStatus> producers) {

  /** Copies the list. */
  public ConsumerStatus {
    producers = List.copyOf(producers);
  }
}
