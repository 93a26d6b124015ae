package io.kvbridge.transfer;

/**
 * What one READ costs a transport, as a line: a fixed cost per descriptor and a cost per byte. A
 * consumer weighs it against a local copy's cost to choose between reading a piece per run of heads
 * and reading whole slabs into a staging area to scatter locally.
 *
 * <p>The figures are a transport's measured ones: {@code benchmarks/run.sh} measures both on the
 * machine it runs on (BENCHMARKS.md, "A real model's KV at real size", the cost model's table); a
 * deployment whose fabric differs sets its own through the connector's {@code read.*} properties.
 *
 * @param nanosPerDescriptor what each descriptor of a READ adds, in nanoseconds
 * @param nanosPerByte what each byte a READ moves adds, in nanoseconds
 */
public record ReadCost(double nanosPerDescriptor, double nanosPerByte) {

  /**
   * What a transport that does not say costs: a microsecond per descriptor (the order NIXL's UCX
   * backend measures per descriptor on host memory) and 0.1 ns per byte (10 GB/s).
   */
  public static final ReadCost UNMEASURED = new ReadCost(1_000, 0.1);

  public ReadCost {
    if (!(nanosPerDescriptor >= 0) || !(nanosPerByte >= 0)) {
      throw new IllegalArgumentException(
          "a read's cost per descriptor and per byte must be 0 or more, got "
              + nanosPerDescriptor
              + " and "
              + nanosPerByte);
    }
  }

  /** What a READ of {@code descriptors} descriptors moving {@code bytes} costs, in nanoseconds. */
  public double nanos(long descriptors, long bytes) {
    return descriptors * nanosPerDescriptor + bytes * nanosPerByte;
  }
}
