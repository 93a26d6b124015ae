package io.kvbridge.fake;

import io.kvbridge.spi.TransportProvider;
import io.kvbridge.tck.ShapeTranslationConformanceTest;
import java.util.Map;
import java.util.UUID;

/** Shape translation over the fake transport; each test runs on a fabric of its own. */
class FakeShapeTranslationConformanceTest extends ShapeTranslationConformanceTest {

  private final String fabric = "shapes-" + UUID.randomUUID();

  @Override
  protected TransportProvider provider() {
    return new FakeTransportProvider();
  }

  @Override
  protected Map<String, String> connectorProperties() {
    return Map.of(FakeTransportProvider.FABRIC, fabric);
  }
}
