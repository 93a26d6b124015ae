package io.kvbridge.tck;

import io.kvbridge.tck.shapes.RankFailureConformance;
import io.kvbridge.tck.shapes.RefusedShapeConformance;
import io.kvbridge.tck.shapes.StreamedLayerConformance;
import io.kvbridge.tck.shapes.TranslatedShapeConformance;
import java.util.Objects;
import org.junit.jupiter.api.Nested;

/**
 * Transfers between engines of different shapes over a connector's transport: tensor parallelism
 * (how many ranks split the KV heads), tokens per block and local prefix hits, in both memory
 * orders. A connector module extends this class with a constructor that passes its {@link
 * ConnectorUnderTest}; the suite starts its engines through {@link ConnectorUnderTest#provider()}.
 *
 * <p>The tests are grouped by what they specify, one {@link Nested} class per group of {@code
 * io.kvbridge.tck.shapes}.
 */
public abstract class ShapeTranslationConformanceTest {

  private final ConnectorUnderTest connector;

  /** The suite, run against {@code connector}, which this test alone uses. */
  protected ShapeTranslationConformanceTest(ConnectorUnderTest connector) {
    this.connector = Objects.requireNonNull(connector, "connector");
  }

  @Nested
  class TranslatedShapes extends TranslatedShapeConformance {
    TranslatedShapes() {
      super(connector);
    }
  }

  @Nested
  class RefusedShapes extends RefusedShapeConformance {
    RefusedShapes() {
      super(connector);
    }
  }

  @Nested
  class RankFailures extends RankFailureConformance {
    RankFailures() {
      super(connector);
    }
  }

  @Nested
  class StreamedLayers extends StreamedLayerConformance {
    StreamedLayers() {
      super(connector);
    }
  }
}
