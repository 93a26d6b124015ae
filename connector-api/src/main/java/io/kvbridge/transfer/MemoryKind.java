package io.kvbridge.transfer;

/** Where a memory region lives, in NIXL's terms. */
public enum MemoryKind {
  /** Host memory. */
  DRAM,
  /** GPU device memory. */
  VRAM
}
