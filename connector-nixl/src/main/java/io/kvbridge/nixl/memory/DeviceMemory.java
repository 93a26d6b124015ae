package io.kvbridge.nixl.memory;

import io.kvbridge.transfer.MemoryKind;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicBoolean;
import org.bytedeco.cuda.global.cudart;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.Pointer;

/**
 * Zeroed CUDA device memory ({@code cudaMalloc}) on one GPU, freed by {@link #close()}. {@link
 * #write} and {@link #read} copy across the bus with {@code cudaMemcpy} through a host staging
 * buffer.
 *
 * <p>Threads: copies to disjoint ranges may run concurrently; {@link #close()} must not race with
 * them.
 */
public final class DeviceMemory implements NativeMemory {

  private final int device;
  private final Pointer base;
  private final long size;
  private final AtomicBoolean open = new AtomicBoolean(true);

  private DeviceMemory(int device, Pointer base, long size) {
    this.device = device;
    this.base = base;
    this.size = size;
  }

  /**
   * Allocates {@code sizeBytes} of zeroed memory on CUDA device {@code device}.
   *
   * @throws IllegalStateException if no such device is usable or the allocation fails
   */
  public static DeviceMemory allocate(int device, long sizeBytes) {
    if (sizeBytes <= 0) {
      throw new IllegalArgumentException("memory size must be positive, got " + sizeBytes);
    }
    CudaRuntime.requireDevice(device);
    CudaRuntime.check(cudart.cudaSetDevice(device), "cudaSetDevice(" + device + ")");
    Pointer base = new Pointer();
    CudaRuntime.check(
        cudart.cudaMalloc(base, sizeBytes),
        "cudaMalloc of " + sizeBytes + " bytes on device " + device);
    try {
      CudaRuntime.check(cudart.cudaMemset(base, 0, sizeBytes), "cudaMemset");
    } catch (IllegalStateException e) {
      cudart.cudaFree(base);
      throw e;
    }
    return new DeviceMemory(device, base, sizeBytes);
  }

  @Override
  public MemoryKind kind() {
    return MemoryKind.VRAM;
  }

  @Override
  public int deviceId() {
    return device;
  }

  @Override
  public long address() {
    return base.address();
  }

  @Override
  public long sizeBytes() {
    return size;
  }

  @Override
  public boolean isOpen() {
    return open.get();
  }

  @Override
  public void write(long offset, ByteBuffer src) {
    int n = src.remaining();
    requireOpen();
    checkRange(offset, n);
    if (n == 0) {
      return;
    }
    byte[] staged = new byte[n];
    src.get(staged);
    try (BytePointer host = new BytePointer(n)) {
      host.put(staged, 0, n);
      CudaRuntime.check(cudart.cudaSetDevice(device), "cudaSetDevice(" + device + ")");
      CudaRuntime.check(
          cudart.cudaMemcpy(
              NativeMemory.at(base.address() + offset), host, n, cudart.cudaMemcpyHostToDevice),
          "cudaMemcpy host to device of " + n + " bytes");
    }
  }

  @Override
  public void read(long offset, ByteBuffer dst) {
    int n = dst.remaining();
    requireOpen();
    checkRange(offset, n);
    if (n == 0) {
      return;
    }
    byte[] staged = new byte[n];
    try (BytePointer host = new BytePointer(n)) {
      CudaRuntime.check(cudart.cudaSetDevice(device), "cudaSetDevice(" + device + ")");
      CudaRuntime.check(
          cudart.cudaMemcpy(
              host, NativeMemory.at(base.address() + offset), n, cudart.cudaMemcpyDeviceToHost),
          "cudaMemcpy device to host of " + n + " bytes");
      host.get(staged, 0, n);
    }
    dst.put(staged);
  }

  @Override
  public void close() {
    if (open.compareAndSet(true, false)) {
      cudart.cudaSetDevice(device);
      cudart.cudaFree(base);
    }
  }

  @Override
  public String toString() {
    return "DeviceMemory[" + size + " bytes on device " + device + "]";
  }

  private void requireOpen() {
    if (!open.get()) {
      throw new IllegalStateException(this + " was closed");
    }
  }
}
