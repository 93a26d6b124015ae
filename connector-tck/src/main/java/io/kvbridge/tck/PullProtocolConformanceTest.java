package io.kvbridge.tck;

import io.kvbridge.tck.protocol.CompletionConformance;
import io.kvbridge.tck.protocol.EngineCallConformance;
import io.kvbridge.tck.protocol.ForgedPeerConformance;
import io.kvbridge.tck.protocol.HandshakeConformance;
import io.kvbridge.tck.protocol.LeaseLifetimeConformance;
import io.kvbridge.tck.protocol.NormalPathConformance;
import io.kvbridge.tck.protocol.PeerLifecycleConformance;
import io.kvbridge.tck.protocol.ProgressConformance;
import io.kvbridge.tck.protocol.TransferParamsConformance;
import java.util.Objects;
import org.junit.jupiter.api.Nested;

/**
 * The pull protocol's behaviour over a connector's transport: what every connector must do,
 * whatever moves its bytes. A connector module extends this class with a constructor that passes
 * its {@link ConnectorUnderTest}; the suite drives a producer and a consumer engine, started
 * through {@link ConnectorUnderTest#provider()}, through the SPI exactly as an engine would, with
 * an injected clock.
 *
 * <p>The tests are grouped by what they specify, one {@link Nested} class per group of {@code
 * io.kvbridge.tck.protocol}; a connector's own protocol tests may extend {@code
 * io.kvbridge.tck.protocol.PullProtocolFixture} the same way.
 */
public abstract class PullProtocolConformanceTest {

  private final ConnectorUnderTest connector;

  /** The suite, run against {@code connector}, which this test alone uses. */
  protected PullProtocolConformanceTest(ConnectorUnderTest connector) {
    this.connector = Objects.requireNonNull(connector, "connector");
  }

  @Nested
  class NormalPath extends NormalPathConformance {
    NormalPath() {
      super(connector);
    }
  }

  @Nested
  class Progress extends ProgressConformance {
    Progress() {
      super(connector);
    }
  }

  @Nested
  class LeaseLifetime extends LeaseLifetimeConformance {
    LeaseLifetime() {
      super(connector);
    }
  }

  @Nested
  class PeerLifecycle extends PeerLifecycleConformance {
    PeerLifecycle() {
      super(connector);
    }
  }

  @Nested
  class ForgedPeers extends ForgedPeerConformance {
    ForgedPeers() {
      super(connector);
    }
  }

  @Nested
  class Handshakes extends HandshakeConformance {
    Handshakes() {
      super(connector);
    }
  }

  @Nested
  class Completions extends CompletionConformance {
    Completions() {
      super(connector);
    }
  }

  @Nested
  class TransferParams extends TransferParamsConformance {
    TransferParams() {
      super(connector);
    }
  }

  @Nested
  class EngineCalls extends EngineCallConformance {
    EngineCalls() {
      super(connector);
    }
  }
}
