package io.kvbridge.nixl;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.kvbridge.nixl.memory.CudaRuntime;
import io.kvbridge.nixl.testing.RequiresNixl;
import io.kvbridge.tck.TransportConformanceTest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The transport contract over real NIXL agents with CUDA device memory. Each test is skipped, with
 * the reason, where no GPU is usable.
 */
@ExtendWith(RequiresNixl.class)
class NixlVramTransportConformanceTest extends TransportConformanceTest {

  NixlVramTransportConformanceTest() {
    super(NixlConnectorUnderTest.in(MemoryMode.VRAM));
  }

  @BeforeEach
  void requireGpu() {
    CudaRuntime.Probe probe = CudaRuntime.probe();
    assumeTrue(probe.usable(), () -> "GPU test skipped: " + CudaRuntime.describe(probe));
  }
}
