package io.kvbridge.transfer;

/**
 * One contiguous piece of a transfer, as NIXL describes it: an address, a length, a device.
 *
 * @param address the start, in the address space of the memory's owner
 * @param length the number of bytes, positive
 * @param deviceId the device (0 for host memory)
 */
public record Descriptor(long address, long length, int deviceId) {

  /** Rejects empty or negative pieces. */
  public Descriptor {
    if (length <= 0) {
      throw new IllegalArgumentException("descriptor length must be positive, got " + length);
    }
    if (deviceId < 0) {
      throw new IllegalArgumentException("device id must be non-negative, got " + deviceId);
    }
  }

  /** The first address past the end. */
  public long end() {
    return address + length;
  }

  /** Whether this piece lies entirely inside {@code [base, base + size)}. */
  public boolean within(long base, long size) {
    return address >= base && length <= size && address - base <= size - length;
  }
}
