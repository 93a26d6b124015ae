package io.kvbridge.spi;

/**
 * How a consumer reads what it takes from a producer rank whose memory splits a token's heads
 * differently from its own (block-major memory on both sides, different tensor parallelism): in
 * place, a piece per token, layer and plane; or staged, the producer's slabs whole into a staging
 * area registered beside each rank's KV memory, then scattered locally (host: a copy per row;
 * device: {@code cudaMemcpy2D}). A staged read moves a few more bytes in far fewer descriptors.
 *
 * @param mode which way to read
 * @param bytesPerRank the staging area of each consumer rank, allocated from its transport at the
 *     first staged read; a read larger than the area is staged in waves, a stage without room
 *     waiting for the load's earlier stages to give theirs back (one of a load that holds none is
 *     read in place)
 */
public record ReadStaging(Mode mode, long bytesPerRank) {

  /**
   * The fewest staging bytes a rank may have: room to measure its copies beyond the caches ({@code
   * CopyCost.MEASURE_BYTES}), and to stage.
   */
  public static final long MIN_BYTES = 32L << 20;

  /** Staged when the cost model says so, 512 MiB per rank. */
  public static final ReadStaging DEFAULT = new ReadStaging(Mode.AUTO, 512L << 20);

  /**
   * Checks the values.
   *
   * @throws InvalidSettingException naming {@code consumer.staging} or {@code
   *     consumer.staging-bytes}
   */
  public ReadStaging {
    if (mode == null) {
      throw new InvalidSettingException("consumer.staging", "must be set: auto, always or never");
    }
    if (bytesPerRank < MIN_BYTES) {
      throw new InvalidSettingException(
          "consumer.staging-bytes",
          "(" + bytesPerRank + " bytes) must be at least " + (MIN_BYTES >> 20) + " MiB");
    }
  }

  /** Which way a consumer reads a pair of ranks that can be staged. */
  public enum Mode {
    /**
     * Staged when the measured cost model finds it cheaper: the transport's cost per descriptor and
     * per byte ({@link io.kvbridge.transfer.Transport#readCost()}) against the local copy's,
     * measured on the staging area when it is allocated.
     */
    AUTO,
    /** Always staged, while the staging area has room. */
    ALWAYS,
    /** Never staged: every piece read in place. */
    NEVER
  }
}
