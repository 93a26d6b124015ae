package io.kvbridge.tck;

import io.kvbridge.tck.transport.CloseConformance;
import io.kvbridge.tck.transport.DescriptorBoundsConformance;
import io.kvbridge.tck.transport.MemoryAndMetadataConformance;
import io.kvbridge.tck.transport.NotificationConformance;
import io.kvbridge.tck.transport.PeerRefusalConformance;
import io.kvbridge.tck.transport.PreparedListConformance;
import io.kvbridge.tck.transport.TransferConformance;
import java.util.Objects;
import org.junit.jupiter.api.Nested;

/**
 * The {@link io.kvbridge.transfer.Transport} contract, as every connector's transport must honour
 * it. A connector module extends this class with a constructor that passes its {@link
 * ConnectorUnderTest}; the suite creates fresh agents with {@link ConnectorUnderTest#newTransport}
 * and drives nothing but the {@code Transport} interface, so a passing transport can carry the pull
 * protocol.
 *
 * <p>The tests are grouped by what they specify, one {@link Nested} class per group of {@code
 * io.kvbridge.tck.transport}.
 */
public abstract class TransportConformanceTest {

  private final ConnectorUnderTest connector;

  /** The suite, run against {@code connector}, which this test alone uses. */
  protected TransportConformanceTest(ConnectorUnderTest connector) {
    this.connector = Objects.requireNonNull(connector, "connector");
  }

  @Nested
  class MemoryAndMetadata extends MemoryAndMetadataConformance {
    MemoryAndMetadata() {
      super(connector);
    }
  }

  @Nested
  class Transfers extends TransferConformance {
    Transfers() {
      super(connector);
    }
  }

  @Nested
  class Notifications extends NotificationConformance {
    Notifications() {
      super(connector);
    }
  }

  @Nested
  class DescriptorBounds extends DescriptorBoundsConformance {
    DescriptorBounds() {
      super(connector);
    }
  }

  @Nested
  class PeerRefusals extends PeerRefusalConformance {
    PeerRefusals() {
      super(connector);
    }
  }

  @Nested
  class PreparedLists extends PreparedListConformance {
    PreparedLists() {
      super(connector);
    }
  }

  @Nested
  class Closing extends CloseConformance {
    Closing() {
      super(connector);
    }
  }
}
