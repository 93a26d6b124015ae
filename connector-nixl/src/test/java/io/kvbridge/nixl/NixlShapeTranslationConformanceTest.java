package io.kvbridge.nixl;

import io.kvbridge.nixl.testing.RequiresNixl;
import io.kvbridge.tck.ShapeTranslationConformanceTest;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Shape translation over real NIXL: every rank of both engines is a NIXL agent in one JVM, UCX over
 * loopback, host memory.
 */
@ExtendWith(RequiresNixl.class)
class NixlShapeTranslationConformanceTest extends ShapeTranslationConformanceTest {

  NixlShapeTranslationConformanceTest() {
    super(NixlConnectorUnderTest.in(MemoryMode.DRAM));
  }
}
