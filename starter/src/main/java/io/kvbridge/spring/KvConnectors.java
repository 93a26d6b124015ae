package io.kvbridge.spring;

import io.kvbridge.spi.Availability;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.Role;
import io.kvbridge.spi.TransportProvider;
import java.util.List;

/**
 * The connectors of this application, created from {@code kvbridge.*} properties. Most engines need
 * one ({@link #create()}); a JVM that hosts several engines (e.g. the sample app's colocated P/D
 * deployment) creates one per engine. Every connector created here is swept and heart-beaten on the
 * configured schedule, shown by the health indicator and the {@code kvbridge} endpoint, measured by
 * Micrometer, and closed when the application context closes.
 *
 * <p>Thread-safe.
 */
public interface KvConnectors {

  /** The provider selected by {@code kvbridge.connector.type}. */
  TransportProvider provider();

  /** Whether that provider can run on this machine with the configured connector properties. */
  Availability availability();

  /** Creates the connector for {@code kvbridge.engine-id} and {@code kvbridge.role}. */
  KvConnector create();

  /** Creates a connector for another engine in this JVM, with every other setting as configured. */
  KvConnector create(String engineId, Role role);

  /**
   * Creates a connector for another engine in this JVM that has {@code tpDegree} tensor-parallel
   * ranks (a worker side, KV memory and transport agent each), with every other setting as
   * configured.
   *
   * @throws IllegalArgumentException if {@code tpDegree} is not 1 to 255
   */
  KvConnector create(String engineId, Role role, int tpDegree);

  /** The connectors created so far and not yet closed. */
  List<KvConnector> all();
}
