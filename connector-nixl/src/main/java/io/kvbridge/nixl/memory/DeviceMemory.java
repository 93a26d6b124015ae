package io.kvbridge.nixl.memory;

import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.MemoryKind;
import java.nio.ByteBuffer;
import org.bytedeco.cuda.global.cudart;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.Pointer;

/**
 * Zeroed CUDA device memory ({@code cudaMalloc}) on one GPU, freed by {@link #close()}. {@link
 * #write} and {@link #read} copy across the bus with {@code cudaMemcpy} through a host staging
 * buffer.
 */
public final class DeviceMemory extends NativeMemory {

  private final int device;

  private DeviceMemory(int device, Pointer base, long size) {
    super(base, size);
    this.device = device;
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
  void copyIn(long address, ByteBuffer src, int n) {
    byte[] staged = new byte[n];
    src.get(staged);
    try (BytePointer host = new BytePointer(n)) {
      host.put(staged, 0, n);
      CudaRuntime.check(cudart.cudaSetDevice(device), "cudaSetDevice(" + device + ")");
      CudaRuntime.check(
          cudart.cudaMemcpy(at(address), host, n, cudart.cudaMemcpyHostToDevice),
          "cudaMemcpy host to device of " + n + " bytes");
    }
  }

  @Override
  void copyOut(long address, ByteBuffer dst, int n) {
    byte[] staged = new byte[n];
    try (BytePointer host = new BytePointer(n)) {
      CudaRuntime.check(cudart.cudaSetDevice(device), "cudaSetDevice(" + device + ")");
      CudaRuntime.check(
          cudart.cudaMemcpy(host, at(address), n, cudart.cudaMemcpyDeviceToHost),
          "cudaMemcpy device to host of " + n + " bytes");
      host.get(staged, 0, n);
    }
    dst.put(staged);
  }

  /**
   * Copies on the device with {@code cudaMemcpy2D} when {@code target} is memory of the same
   * device: one call for every row, no byte crossing the bus.
   */
  @Override
  public void copyRows(
      long offset,
      long pitch,
      KvMemory target,
      long targetOffset,
      long targetPitch,
      int width,
      int rows) {
    if (!(target instanceof DeviceMemory into) || into.device != device) {
      super.copyRows(offset, pitch, target, targetOffset, targetPitch, width, rows);
      return;
    }
    checkRows(offset, pitch, width, rows);
    into.checkRows(targetOffset, targetPitch, width, rows);
    requireOpen(into);
    if (rows == 0) {
      return;
    }
    CudaRuntime.check(cudart.cudaSetDevice(device), "cudaSetDevice(" + device + ")");
    CudaRuntime.check(
        cudart.cudaMemcpy2D(
            at(into.address() + targetOffset),
            targetPitch,
            at(address() + offset),
            pitch,
            width,
            rows,
            cudart.cudaMemcpyDeviceToDevice),
        "cudaMemcpy2D of " + rows + " rows of " + width + " bytes on device " + device);
  }

  @Override
  void free(Pointer base) {
    cudart.cudaSetDevice(device);
    cudart.cudaFree(base);
  }

  @Override
  public String toString() {
    return "DeviceMemory[" + sizeBytes() + " bytes on device " + device + "]";
  }
}
