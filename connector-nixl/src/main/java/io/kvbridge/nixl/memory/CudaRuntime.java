package io.kvbridge.nixl.memory;

import java.lang.System.Logger.Level;
import java.util.Optional;
import org.bytedeco.cuda.global.cudart;
import org.bytedeco.javacpp.Loader;

/**
 * Whether this machine has a usable CUDA GPU, through the bytedeco {@code cuda} preset. Probed
 * once: loading the CUDA runtime fails with {@link UnsatisfiedLinkError} where the NVIDIA driver or
 * {@code libcudart.so.13} is missing, and a second attempt would only report {@link
 * NoClassDefFoundError}, so the first outcome and its root cause are kept.
 *
 * <p>Thread-safe.
 */
public final class CudaRuntime {

  private static final System.Logger LOG = System.getLogger(CudaRuntime.class.getName());

  private static Probe probe;

  private CudaRuntime() {}

  /** The outcome of the probe. */
  public sealed interface Probe {
    /** Whether device memory can be allocated. */
    default boolean usable() {
      return this instanceof Usable;
    }
  }

  /**
   * A GPU is usable.
   *
   * @param deviceCount the number of CUDA devices
   * @param runtimeVersion the CUDA runtime's version, e.g. 13010
   * @param driverVersion the CUDA version the driver supports, e.g. 13000
   */
  public record Usable(int deviceCount, int runtimeVersion, int driverVersion) implements Probe {}

  /**
   * No GPU is usable.
   *
   * @param reason why, and what would fix it
   * @param cause the root failure, e.g. the {@link UnsatisfiedLinkError} of loading the runtime
   */
  public record Unusable(String reason, Optional<Throwable> cause) implements Probe {}

  /** Probes on the first call; returns that outcome ever after. */
  public static synchronized Probe probe() {
    if (probe == null) {
      probe = load();
      LOG.log(Level.INFO, "CUDA probe: {0}", describe(probe));
    }
    return probe;
  }

  /** A one-line description of a probe outcome, for logs and messages. */
  public static String describe(Probe outcome) {
    if (outcome instanceof Usable u) {
      return u.deviceCount()
          + " CUDA device(s), runtime "
          + u.runtimeVersion()
          + ", driver supports "
          + u.driverVersion();
    }
    return "no usable GPU: " + ((Unusable) outcome).reason();
  }

  /**
   * Throws unless device {@code device} is usable.
   *
   * @throws IllegalStateException naming the root cause
   */
  static void requireDevice(int device) {
    Probe outcome = probe();
    if (outcome instanceof Unusable u) {
      throw new IllegalStateException(
          "CUDA device " + device + " is not usable: " + u.reason(), u.cause().orElse(null));
    }
    Usable usable = (Usable) outcome;
    if (device < 0 || device >= usable.deviceCount()) {
      throw new IllegalStateException(
          "CUDA device "
              + device
              + " does not exist: this machine has "
              + usable.deviceCount()
              + " (devices 0.."
              + (usable.deviceCount() - 1)
              + ")");
    }
  }

  /** Throws {@link IllegalStateException} naming {@code call} if {@code error} is not success. */
  static void check(int error, String call) {
    if (error != cudart.cudaSuccess) {
      throw new IllegalStateException(
          call
              + " failed with CUDA error "
              + error
              + " ("
              + cudart.cudaGetErrorString(error).getString()
              + ")");
    }
  }

  private static Probe load() {
    try {
      Loader.load(cudart.class);
    } catch (UnsatisfiedLinkError | NoClassDefFoundError e) {
      return new Unusable(
          "the CUDA runtime cannot be loaded ("
              + rootMessage(e)
              + "); a GPU needs the NVIDIA driver (libcuda.so.1) and the CUDA 13 runtime"
              + " (libcudart.so.13) on the library path",
          Optional.of(e));
    }
    int[] value = new int[1];
    int error = cudart.cudaGetDeviceCount(value);
    if (error != cudart.cudaSuccess) {
      return new Unusable(
          "cudaGetDeviceCount failed with CUDA error "
              + error
              + " ("
              + cudart.cudaGetErrorString(error).getString()
              + ")",
          Optional.empty());
    }
    int count = value[0];
    if (count == 0) {
      return new Unusable("the CUDA runtime loaded but reports no device", Optional.empty());
    }
    cudart.cudaRuntimeGetVersion(value);
    int runtime = value[0];
    cudart.cudaDriverGetVersion(value);
    return new Usable(count, runtime, value[0]);
  }

  private static String rootMessage(Throwable e) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    return root.getClass().getSimpleName() + ": " + root.getMessage();
  }
}
