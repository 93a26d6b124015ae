package io.kvbridge.nixl;

import java.util.Locale;

/**
 * Which memory a NIXL transport allocates for the KV cache ({@code nixl.memory}: {@code auto},
 * {@code vram} or {@code dram}, in any case).
 */
public enum MemoryMode {
  /** Device memory when a CUDA GPU is usable, host memory otherwise. */
  AUTO,
  /** CUDA device memory; creating the transport fails without a usable GPU. */
  VRAM,
  /** Host memory. */
  DRAM;

  /** The name as configured, e.g. {@code dram}. */
  @Override
  public String toString() {
    return name().toLowerCase(Locale.ROOT);
  }
}
