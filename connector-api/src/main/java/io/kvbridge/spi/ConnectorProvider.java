package io.kvbridge.spi;

/**
 * A kind of connector, discovered with {@link java.util.ServiceLoader} under {@code
 * META-INF/services/io.kvbridge.spi.ConnectorProvider} and chosen by its {@link #type()}.
 *
 * <p>Providers are small: creating one must not load native libraries or allocate resources; {@link
 * #availability()} does the probing (once, cached) and {@link #create} the work.
 */
public interface ConnectorProvider {

  /** The name configuration selects this connector by, e.g. {@code fake} or {@code nixl}. */
  String type();

  /** Whether this connector can run on this machine; probes once and remembers the answer. */
  Availability availability();

  /**
   * Creates a connector: the scheduler side and the worker side of one engine, sharing one lease
   * table and one transport.
   *
   * @throws ConnectorUnavailableException if {@link #availability()} says it cannot run here
   */
  KvConnector create(ConnectorSettings settings);
}
