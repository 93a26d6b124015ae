package io.kvbridge.spi;

import io.kvbridge.transfer.Transport;

/**
 * A kind of connector: what moves its bytes. Discovered with {@link java.util.ServiceLoader} under
 * {@code META-INF/services/io.kvbridge.spi.TransportProvider} and chosen by its {@link #type()};
 * connector-api builds the connector around the transport it creates ({@code
 * io.kvbridge.runtime.ConnectorRegistry}), so every connector speaks the same protocol, grants the
 * same leases and reports the same status.
 *
 * <p>Providers are small: creating one must not load native libraries or allocate resources; {@link
 * #availability} does the probing (cached) and {@link #create} the work.
 *
 * <p>Threads: any thread may call any method; a provider is shared by every engine of a process.
 */
public interface TransportProvider {

  /** The name configuration selects this connector by, e.g. {@code fake} or {@code nixl}. */
  String type();

  /**
   * Whether this connector can run on this machine with {@code properties}, the connector-specific
   * settings an engine would create it with (some, such as where a native library is installed,
   * decide whether it can). Checks the properties this connector reads, so an invalid one is
   * refused before any engine starts. Probes at most once per distinct answer-deciding setting and
   * remembers the answer.
   *
   * @throws InvalidSettingException if a property of this connector is unknown or invalid
   */
  Availability availability(ConnectorProperties properties);

  /**
   * Creates the transport agent of tensor-parallel rank {@code rank} of one engine, named {@link
   * #agentName agentName(settings.engineId(), rank)} and configured by {@code
   * settings.properties()}. Called once per rank, only when {@link #availability} says the
   * connector can run here with those properties; the caller owns the transport and closes it.
   *
   * @throws InvalidSettingException if a connector-specific property is invalid
   */
  Transport create(ConnectorSettings settings, int rank);

  /** The agent name of rank {@code rank} of engine {@code engineId}: the id itself for rank 0. */
  static String agentName(String engineId, int rank) {
    return rank == 0 ? engineId : engineId + "-rank" + rank;
  }
}
