package io.kvbridge.fake;

import io.kvbridge.tck.ShapeTranslationConformanceTest;

/** Shape translation over the fake transport; each test runs on a fabric of its own. */
class FakeShapeTranslationConformanceTest extends ShapeTranslationConformanceTest {

  FakeShapeTranslationConformanceTest() {
    super(new FakeConnectorUnderTest());
  }
}
