package io.kvbridge.nixl;

import java.util.Locale;

/** Which memory a NIXL transport allocates for the KV cache ({@code nixl.memory}). */
public enum MemoryMode {
  /** Device memory when a CUDA GPU is usable, host memory otherwise. */
  AUTO,
  /** CUDA device memory; creating the transport fails without a usable GPU. */
  VRAM,
  /** Host memory. */
  DRAM;

  /**
   * Parses {@code auto}, {@code vram} or {@code dram}, ignoring case.
   *
   * @throws IllegalArgumentException naming the property and the accepted values
   */
  public static MemoryMode parse(String property, String value) {
    for (MemoryMode mode : values()) {
      if (mode.name().equalsIgnoreCase(value.trim())) {
        return mode;
      }
    }
    throw new IllegalArgumentException(
        property + "='" + value + "' is not one of auto, vram, dram");
  }

  @Override
  public String toString() {
    return name().toLowerCase(Locale.ROOT);
  }
}
