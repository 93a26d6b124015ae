package io.kvbridge.nixl.memory;

import io.kvbridge.transfer.KvMemory;
import org.bytedeco.javacpp.Pointer;

/**
 * KV memory at a real address that NIXL can register: host memory ({@link HostMemory}) or CUDA
 * device memory ({@link DeviceMemory}). {@link #address()} is the pointer descriptors use.
 */
public sealed interface NativeMemory extends KvMemory permits HostMemory, DeviceMemory {

  /** Whether {@link #close()} has not been called yet. */
  boolean isOpen();

  /** A JavaCPP pointer to an absolute address, for calls that take one. */
  static Pointer at(long absolute) {
    return new Pointer() {
      {
        address = absolute;
      }
    };
  }
}
