package io.kvbridge.nixl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.kvbridge.nixl.memory.CudaRuntime;
import io.kvbridge.nixl.memory.DeviceMemory;
import io.kvbridge.nixl.memory.HostMemory;
import io.kvbridge.nixl.testing.RequiresNixl;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.MemoryKind;
import io.kvbridge.transfer.Transport;
import io.kvbridge.transfer.TransportException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Which memory {@code nixl.memory} gives, with and without a usable GPU. */
@ExtendWith(RequiresNixl.class)
class NixlMemoryModeTest {

  private static final long SIZE = 1 << 16;

  @Test
  void dramAllocatesHostMemory() {
    try (Transport t = transport("mode-dram", MemoryMode.DRAM);
        KvMemory memory = t.allocate(SIZE)) {
      assertThat(t.memoryKind()).isEqualTo(MemoryKind.DRAM);
      assertThat(memory).isInstanceOf(HostMemory.class);
      assertThat(memory.deviceId()).isZero();
    }
  }

  @Test
  void autoWithoutAUsableGpuAllocatesHostMemory() {
    assumeFalse(CudaRuntime.probe().usable(), "this machine has a usable GPU");

    try (Transport t = transport("mode-auto", MemoryMode.AUTO);
        KvMemory memory = t.allocate(SIZE)) {
      assertThat(t.memoryKind()).isEqualTo(MemoryKind.DRAM);
      assertThat(memory).isInstanceOf(HostMemory.class);
    }
  }

  @Test
  void vramWithoutAUsableGpuFailsCreationNamingTheRootCause() {
    CudaRuntime.Probe probe = CudaRuntime.probe();
    assumeFalse(probe.usable(), "this machine has a usable GPU");
    CudaRuntime.Unusable unusable = (CudaRuntime.Unusable) probe;

    assertThatThrownBy(() -> transport("mode-vram", MemoryMode.VRAM))
        .isInstanceOf(TransportException.class)
        .hasMessageContaining("nixl.memory=vram but no GPU is usable")
        .hasMessageContaining(unusable.reason())
        .satisfies(e -> assertThat(e.getCause()).isEqualTo(unusable.cause().orElse(null)));
  }

  @Test
  void theGpuProbeIsDoneOnceAndRemembered() {
    assertThat(CudaRuntime.probe()).isSameAs(CudaRuntime.probe());
  }

  @Test
  void autoWithAUsableGpuAllocatesDeviceMemory() {
    CudaRuntime.Probe probe = CudaRuntime.probe();
    assumeTrue(probe.usable(), () -> "no GPU test here: " + CudaRuntime.describe(probe));

    try (Transport t = transport("mode-auto-gpu", MemoryMode.AUTO);
        KvMemory memory = t.allocate(SIZE)) {
      assertThat(t.memoryKind()).isEqualTo(MemoryKind.VRAM);
      assertThat(memory).isInstanceOf(DeviceMemory.class);
    }
  }

  private static Transport transport(String name, MemoryMode mode) {
    return NixlBackend.transport(name, NixlOptions.defaults().withMemory(mode));
  }
}
