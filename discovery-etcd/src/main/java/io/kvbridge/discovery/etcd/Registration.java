package io.kvbridge.discovery.etcd;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.runtime.PullConnector;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.ConnectorStatus;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.ProducerStatus;
import java.lang.System.Logger.Level;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * One local engine's registration: the connector it describes and what is known in etcd of it.
 *
 * <p>Threads: {@link #kvCacheRegistered} from the engine's thread; everything else on the discovery
 * thread.
 */
final class Registration {

  private static final System.Logger LOG = System.getLogger(EtcdDiscovery.class.getName());

  final KvConnector connector;
  final String engineId;
  final String key;
  private final EngineLoad load;
  private final EngineAttributes attributes;
  private final Optional<String> agentName;
  private volatile KvLayout layout;
  private int ranksRegistered;

  /** The etcd lease the key is bound to; 0 while there is none. */
  long leaseId;

  /** What was last written under the key, and when (System.nanoTime). */
  EngineRecord published;

  long publishedAt;

  /** The key was seen deleted, or missing from a listing, while the lease may still be live. */
  boolean keyMissing;

  /** Whether the key is known to be in etcd now. */
  boolean registered;

  /** The incarnation of another process last seen writing this engine's key; 0: none. */
  long otherWriter;

  private boolean loadFailed;
  private boolean attributesFailed;

  Registration(KvConnector connector, String key, EngineLoad load, EngineAttributes attributes) {
    this.connector = connector;
    this.engineId = connector.settings().engineId();
    this.key = key;
    this.load = load;
    this.attributes = attributes;
    // The transport agent's name is not part of the SPI; the pull protocol's connector knows it.
    this.agentName =
        connector instanceof PullConnector pull
            ? Optional.of(pull.transport().agentName())
            : Optional.empty();
  }

  /**
   * One rank of the engine registered its KV cache; once every rank has, the engine answers
   * handshakes and its layout is known.
   */
  synchronized void kvCacheRegistered(KvLayout value) {
    if (++ranksRegistered == connector.settings().tpDegree()) {
      this.layout = value;
    }
  }

  /** Whether there is something to publish: every rank's KV cache is registered. */
  boolean ready() {
    return layout != null;
  }

  /** What to publish now; call only when {@link #ready()}. */
  EngineRecord record() {
    ConnectorSettings settings = connector.settings();
    ConnectorStatus status = connector.status();
    return new EngineRecord(
        engineId,
        settings.role(),
        settings.incarnation(),
        status.producer().flatMap(ProducerStatus::handshakeAddress),
        agentName,
        layout.fingerprint(),
        settings.tpDegree(),
        freeBlocks(),
        status.producer().map(ProducerStatus::liveLeases).orElse(0),
        attributes());
  }

  /** What the application says about the engine; none if it fails to say (logged once). */
  private Map<String, String> attributes() {
    try {
      Map<String, String> said = attributes.attributes(engineId);
      // Checked here rather than when the record is built: a bad answer costs only the attributes.
      EngineRecord.checkAttributes(said);
      return said;
    } catch (RuntimeException e) {
      if (!attributesFailed) {
        attributesFailed = true;
        LOG.log(
            Level.WARNING,
            "engine " + engineId + " could not say what to publish about it; published none",
            e);
      }
      return Map.of();
    }
  }

  /** What the engine says of its free blocks; unknown if it fails to say (logged once). */
  private OptionalInt freeBlocks() {
    try {
      return load.freeBlocks(engineId);
    } catch (RuntimeException e) {
      if (!loadFailed) {
        loadFailed = true;
        LOG.log(
            Level.WARNING,
            "engine " + engineId + " could not say how many blocks it has free; published unknown",
            e);
      }
      return OptionalInt.empty();
    }
  }
}
