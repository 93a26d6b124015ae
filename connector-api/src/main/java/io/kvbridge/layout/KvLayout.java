package io.kvbridge.layout;

import java.io.ByteArrayOutputStream;
import java.io.DataInput;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The shape of one rank's KV cache: what model it holds, which of its heads, how many tokens a
 * block holds, and how the bytes of a block are ordered in memory. Two engines exchange KV when
 * their models agree ({@link #fingerprint()}: model, dtype, layers, planes, KV heads, head
 * dimension, memory order) and their memory orders agree; tensor parallelism (which heads a rank
 * holds) and the tokens per block may differ (an integer ratio), and the transfer planner
 * translates between them.
 *
 * <p>A block holds, for each layer and each plane (K, V), the rank's heads for {@link
 * #tokensPerBlock} tokens, each a vector of {@link #headDim} elements of {@link #dtypeBytes} bytes:
 * one <em>slab</em> per (block, layer, plane). The {@link MemoryOrder} says how a slab's vectors
 * are ordered; the {@link Placement} says in which of the rank's regions, and where in it, each
 * slab lies: blocks holding every layer back to back in one region, or one tensor per layer (per
 * layer and plane) as most engines allocate them.
 *
 * <p>Offsets: {@link #offset} and {@link #slabOffset} return a <em>rank offset</em>, the region's
 * index times 2<sup>{@value #REGION_SHIFT}</sup> plus the offset inside the region ({@link
 * #region(long)}, {@link #inRegion(long)}), so that ranges of one rank compare and merge as plain
 * numbers and never run from one region into the next.
 *
 * @param model the model's identity (name and revision); engines of different models never pair
 * @param dtypeBytes bytes per element (2 for fp16/bf16, 1 for fp8)
 * @param layers the model's layers
 * @param planes 2 for separate K and V, 1 for one shared latent per token (e.g. MLA)
 * @param kvHeads the model's KV heads, over all ranks
 * @param headStart the first KV head this rank holds
 * @param headCount how many consecutive KV heads this rank holds
 * @param headDim elements per head vector
 * @param tokensPerBlock tokens per block
 * @param blockCount blocks in this rank's pool
 * @param order how the rank's heads and a block's tokens are ordered within one (block, layer,
 *     plane) slab
 * @param placement how slabs are placed in the rank's regions: one cross-layer region, or one per
 *     layer (or per layer and plane), as the engine allocated its KV tensors
 */
public record KvLayout(
    String model,
    int dtypeBytes,
    int layers,
    int planes,
    int kvHeads,
    int headStart,
    int headCount,
    int headDim,
    int tokensPerBlock,
    int blockCount,
    MemoryOrder order,
    Placement placement) {

  /** The longest model name, in bytes of UTF-8. */
  public static final int MAX_MODEL_BYTES = 256;

  /** Rank offsets keep a region's index above this bit: a region is smaller than 16 TiB. */
  public static final int REGION_SHIFT = 44;

  /** How the vectors of one slab (a block's tokens of one layer and plane) are ordered. */
  public enum MemoryOrder {
    /**
     * Token, head, element ("NHD"): a token's head vectors are next to each other, a head's tokens
     * are not. Blocks of different sizes translate cheaply; a slice of the heads is one piece per
     * token.
     */
    BLOCK_MAJOR,
    /**
     * Head, token, element ("HND"): one head's tokens are contiguous. A slice of the heads is one
     * piece per slab; blocks of different sizes translate one piece per head.
     */
    HEAD_MAJOR
  }

  /**
   * Where a rank's slabs lie: in how many regions (separately allocated and registered tensors),
   * and in what order within each. {@code N} is {@link #blockCount}, {@code P} {@link #planes}.
   */
  public enum Placement {
    /**
     * One region of {@code N} blocks back to back, each block its layers, each layer its planes:
     * {@code [N][layers][P][slab]}. A block is one contiguous range (vLLM's cross-layer NIXL
     * layout, TensorRT-LLM's block pool).
     */
    CROSS_LAYER,
    /**
     * One region per layer, {@code [P][N][slab]}: vLLM's FlashAttention KV tensor per layer, {@code
     * [2, num_blocks, block_size, num_kv_heads, head_size]} (NHD: {@link MemoryOrder#BLOCK_MAJOR})
     * or its HND permutation ({@link MemoryOrder#HEAD_MAJOR}).
     */
    PER_LAYER,
    /**
     * One region per layer, {@code [N][P][slab]}: FlashInfer's {@code [num_blocks, 2, block_size,
     * num_kv_heads, head_dim]} (NHD, or HND), and an MLA latent per layer, {@code [num_blocks,
     * block_size, 576]} ({@code planes} 1).
     */
    PER_LAYER_BLOCK_FIRST,
    /**
     * One region per layer and plane, {@code [N][slab]}: separate K and V tensors per layer (as
     * llama.cpp and SGLang's token pools keep them); region {@code layer × P + plane}.
     */
    PER_LAYER_PLANE
  }

  /** A layout of {@link Placement#CROSS_LAYER} memory: one region holding whole blocks. */
  public KvLayout(
      String model,
      int dtypeBytes,
      int layers,
      int planes,
      int kvHeads,
      int headStart,
      int headCount,
      int headDim,
      int tokensPerBlock,
      int blockCount,
      MemoryOrder order) {
    this(
        model,
        dtypeBytes,
        layers,
        planes,
        kvHeads,
        headStart,
        headCount,
        headDim,
        tokensPerBlock,
        blockCount,
        order,
        Placement.CROSS_LAYER);
  }

  /** Checks every value; messages name the field. */
  public KvLayout {
    Objects.requireNonNull(model, "model");
    Objects.requireNonNull(order, "order");
    Objects.requireNonNull(placement, "placement");
    if (model.isBlank() || model.getBytes(StandardCharsets.UTF_8).length > MAX_MODEL_BYTES) {
      throw new IllegalArgumentException(
          "KV layout: model must be 1 to "
              + MAX_MODEL_BYTES
              + " bytes of UTF-8, got '"
              + model
              + "'");
    }
    positive("dtype_bytes", dtypeBytes);
    positive("layers", layers);
    if (planes != 1 && planes != 2) {
      throw new IllegalArgumentException("KV layout: planes must be 1 or 2, got " + planes);
    }
    positive("kv_heads", kvHeads);
    positive("head_count", headCount);
    if (headStart < 0 || headStart > kvHeads - headCount) {
      throw new IllegalArgumentException(
          "KV layout: heads ["
              + headStart
              + ", "
              + (headStart + headCount)
              + ") are not within the model's "
              + kvHeads);
    }
    positive("head_dim", headDim);
    if (dtypeBytes > 255 || layers > 65_535 || kvHeads > 65_535 || headDim > 65_535) {
      throw new IllegalArgumentException(
          "KV layout: dtype_bytes up to 255, layers, kv_heads and head_dim up to 65535");
    }
    positive("tokens_per_block", tokensPerBlock);
    positive("block_count", blockCount);
    long bytes = (long) layers * planes * headCount * tokensPerBlock * headDim * dtypeBytes;
    if (bytes > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(
          "KV layout: a block of " + bytes + " bytes is larger than 2 GiB; use smaller blocks");
    }
    long region = regionBytes(placement, blockCount, planes, bytes, layers);
    if (region >= 1L << REGION_SHIFT) {
      throw new IllegalArgumentException(
          "KV layout: a region of "
              + region
              + " bytes is 16 TiB or more; use fewer blocks or a placement with more regions");
    }
  }

  private static long regionBytes(
      Placement placement, int blockCount, int planes, long blockBytes, int layers) {
    long slab = blockBytes / layers / planes;
    return switch (placement) {
      case CROSS_LAYER -> blockCount * blockBytes;
      case PER_LAYER, PER_LAYER_BLOCK_FIRST -> (long) blockCount * planes * slab;
      case PER_LAYER_PLANE -> blockCount * slab;
    };
  }

  /**
   * A layout with one head of {@code bytesPerToken} one-byte elements, one plane and one layer: for
   * engines (and tests) that see a token's KV as opaque bytes.
   */
  public static KvLayout opaque(
      String model, int tokensPerBlock, int bytesPerToken, int blockCount) {
    return new KvLayout(
        model, 1, 1, 1, 1, 0, 1, bytesPerToken, tokensPerBlock, blockCount, MemoryOrder.HEAD_MAJOR);
  }

  /**
   * The layout of rank {@code rank} of {@code tp}: an equal share of the heads, or, with more ranks
   * than KV heads ({@code tp} a multiple of them), one head that {@code tp / kvHeads} consecutive
   * ranks each hold (replicated KV, as engines run GQA models at high TP and keep an MLA latent,
   * one "head", on every rank).
   */
  public KvLayout forRank(int rank, int tp) {
    boolean split = tp >= 1 && tp <= kvHeads && kvHeads % tp == 0;
    boolean replicated = tp > kvHeads && tp % kvHeads == 0;
    if (!(split || replicated) || rank < 0 || rank >= tp) {
      throw new IllegalArgumentException(
          "KV layout: rank "
              + rank
              + " of "
              + tp
              + " can hold neither an equal share of "
              + kvHeads
              + " KV heads nor one of them as an equal number of replicas");
    }
    int start = replicated ? rank / (tp / kvHeads) : rank * (kvHeads / tp);
    int count = replicated ? 1 : kvHeads / tp;
    return new KvLayout(
        model,
        dtypeBytes,
        layers,
        planes,
        kvHeads,
        start,
        count,
        headDim,
        tokensPerBlock,
        blockCount,
        order,
        placement);
  }

  /**
   * The identity of what must match for two engines to exchange KV: model, dtype, layers, planes,
   * KV heads and head dimension, hashed (32 hex digits). Equal fingerprints are necessary, not
   * sufficient: the block sizes must also be in an integer ratio ({@link #incompatibilityWith}).
   * The heads a rank holds, its block size, its pool size and its memory (order and placement) are
   * not part of it, so every rank of every engine serving one model has the same fingerprint; a
   * router or a registry can group engines by it.
   */
  public String fingerprint() {
    String canonical =
        String.join(
            "|",
            "kvbridge/layout/4",
            model,
            Integer.toString(dtypeBytes),
            Integer.toString(layers),
            Integer.toString(planes),
            Integer.toString(kvHeads),
            Integer.toString(headDim));
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      return HexFormat.of()
          .formatHex(sha.digest(canonical.getBytes(StandardCharsets.UTF_8)))
          .substring(0, 32);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK provides SHA-256", e);
    }
  }

  /** This layout with blocks of {@code tokens} tokens. */
  public KvLayout withTokensPerBlock(int tokens) {
    return new KvLayout(
        model,
        dtypeBytes,
        layers,
        planes,
        kvHeads,
        headStart,
        headCount,
        headDim,
        tokens,
        blockCount,
        order,
        placement);
  }

  /** This layout with {@code count} blocks. */
  public KvLayout withBlockCount(int count) {
    return new KvLayout(
        model,
        dtypeBytes,
        layers,
        planes,
        kvHeads,
        headStart,
        headCount,
        headDim,
        tokensPerBlock,
        count,
        order,
        placement);
  }

  /** This layout with slabs in {@code memoryOrder} placed as {@code memoryPlacement} says. */
  public KvLayout withMemory(MemoryOrder memoryOrder, Placement memoryPlacement) {
    return new KvLayout(
        model,
        dtypeBytes,
        layers,
        planes,
        kvHeads,
        headStart,
        headCount,
        headDim,
        tokensPerBlock,
        blockCount,
        memoryOrder,
        memoryPlacement);
  }

  /** The size of one block in bytes: every layer's and plane's slab of it. */
  public int blockBytes() {
    return layers * planes * slabBytes();
  }

  /** The pool's total size in bytes, over every region. */
  public long totalBytes() {
    return (long) blockCount * blockBytes();
  }

  /** The bytes of one head vector of one token. */
  public int vectorBytes() {
    return headDim * dtypeBytes;
  }

  /** The bytes of one slab: the rank's heads of one block's tokens in one layer and plane. */
  public int slabBytes() {
    return headCount * tokensPerBlock * vectorBytes();
  }

  /** How many regions the rank's memory is: 1, one per layer, or one per layer and plane. */
  public int regions() {
    return switch (placement) {
      case CROSS_LAYER -> 1;
      case PER_LAYER, PER_LAYER_BLOCK_FIRST -> layers;
      case PER_LAYER_PLANE -> layers * planes;
    };
  }

  /** The size of each region in bytes (every region of a rank has the same size). */
  public long regionBytes() {
    return regionBytes(placement, blockCount, planes, blockBytes(), layers);
  }

  /**
   * The bytes of one <em>extent</em>: the largest piece of a block that is contiguous in every
   * placement of it — the whole block (cross-layer), a layer's planes of it (per layer, blocks
   * first) or one slab. Every region is a run of extents back to back, so extent {@code i} of a
   * region starts at {@code i × extentBytes()} in it.
   */
  public int extentBytes() {
    return switch (placement) {
      case CROSS_LAYER -> blockBytes();
      case PER_LAYER_BLOCK_FIRST -> planes * slabBytes();
      case PER_LAYER, PER_LAYER_PLANE -> slabBytes();
    };
  }

  /** How many extents one block is: its bytes over {@link #extentBytes()}. */
  public int extentsPerBlock() {
    return blockBytes() / extentBytes();
  }

  /**
   * The rank offset of extent {@code e} (in memory order of the block's slabs) of {@code block}.
   */
  public long extentOffset(int block, int e) {
    return switch (placement) {
      case CROSS_LAYER -> (long) block * blockBytes();
      case PER_LAYER_BLOCK_FIRST -> slabOffset(block, e, 0);
      case PER_LAYER, PER_LAYER_PLANE -> slabOffset(block, e / planes, e % planes);
    };
  }

  /**
   * The index of the extent that starts at rank offset {@code offset} among every extent of the
   * rank (regions in order, each's extents in order), or -1 if no extent starts there.
   */
  public long extentIndex(long offset) {
    int region = region(offset);
    long within = inRegion(offset);
    if (region >= regions() || within % extentBytes() != 0 || within >= regionBytes()) {
      return -1;
    }
    return (long) region * extentsPerRegion() + within / extentBytes();
  }

  /** How many extents one region holds. */
  public long extentsPerRegion() {
    return regionBytes() / extentBytes();
  }

  /**
   * The rank offset where the slab of {@code block}, {@code layer} and {@code plane} starts: its
   * vectors are the rank's heads of the block's tokens, ordered as {@link #order} says.
   */
  public long slabOffset(int block, int layer, int plane) {
    long slab = slabBytes();
    return switch (placement) {
      case CROSS_LAYER -> ((long) block * layers * planes + (long) layer * planes + plane) * slab;
      case PER_LAYER -> rankOffset(layer, ((long) plane * blockCount + block) * slab);
      case PER_LAYER_BLOCK_FIRST -> rankOffset(layer, ((long) block * planes + plane) * slab);
      case PER_LAYER_PLANE -> rankOffset(layer * planes + plane, block * slab);
    };
  }

  /**
   * The rank offset where the vector of model-wide head {@code head} (one this rank holds) of token
   * {@code token} of {@code block}, in {@code layer} and {@code plane}, starts.
   */
  public long offset(int block, int layer, int plane, int head, int token) {
    return slabOffset(block, layer, plane) + offsetInSlab(head, token);
  }

  /**
   * Where the vector of head {@code head} of token {@code token}, in {@code layer} and {@code
   * plane}, lies in a block's <em>image</em>: its slabs in (layer, plane) order, back to back — as
   * a cross-layer block lies in memory, and as {@link io.kvbridge.transfer.KvRegions#readBlock}
   * gathers a block of any placement.
   */
  public long offsetInBlock(int layer, int plane, int head, int token) {
    return ((long) layer * planes + plane) * slabBytes() + offsetInSlab(head, token);
  }

  /** Where, inside a slab, the vector of head {@code head} of the slab's token {@code token} is. */
  public long offsetInSlab(int head, int token) {
    int h = head - headStart;
    return switch (order) {
      case BLOCK_MAJOR -> ((long) token * headCount + h) * vectorBytes();
      case HEAD_MAJOR -> ((long) h * tokensPerBlock + token) * vectorBytes();
    };
  }

  /**
   * Whether consecutive tokens of one head are adjacent in a slab: head-major order, or a rank that
   * holds one head (then both orders place a slab's vectors alike).
   */
  public boolean tokensAdjacent() {
    return order == MemoryOrder.HEAD_MAJOR || headCount == 1;
  }

  /** Whether a token's heads are adjacent in a slab: block-major order, or one head. */
  public boolean headsAdjacent() {
    return order == MemoryOrder.BLOCK_MAJOR || headCount == 1;
  }

  /** The rank offset of {@code within} bytes into region {@code region}. */
  public static long rankOffset(int region, long within) {
    return ((long) region << REGION_SHIFT) | within;
  }

  /** The region a rank offset lies in. */
  public static int region(long rankOffset) {
    return (int) (rankOffset >>> REGION_SHIFT);
  }

  /** Where in its region a rank offset lies. */
  public static long inRegion(long rankOffset) {
    return rankOffset & ((1L << REGION_SHIFT) - 1);
  }

  /** Receives byte ranges of a rank, as rank offsets and lengths. */
  @FunctionalInterface
  public interface RangeSink {
    void accept(long rankOffset, long length);
  }

  /**
   * The bytes of {@code block} that its first {@code usedTokens} tokens occupy, in memory order:
   * for each layer, each plane, the used vectors of the slab in the order they lie in it; ranges
   * that adjoin are handed over as one. What a producer's checksum of a block covers, and in that
   * order.
   */
  public void forEachUsedRange(int block, int usedTokens, RangeSink sink) {
    forEachUsedRange(block, usedTokens, 0, layers, sink);
  }

  /**
   * {@link #forEachUsedRange(int, int, RangeSink)} of the layers {@code [fromLayer, toLayer)}
   * alone: what a producer's checksum of one block's layers covers when it streams a request layer
   * by layer, and in that order.
   */
  public void forEachUsedRange(
      int block, int usedTokens, int fromLayer, int toLayer, RangeSink sink) {
    if (fromLayer < 0 || toLayer > layers || fromLayer >= toLayer) {
      throw new IllegalArgumentException(
          "layers [" + fromLayer + ", " + toLayer + ") are not within the " + layers + " layers");
    }
    long[] open = {-1, 0};
    RangeSink merging =
        (at, length) -> {
          if (open[0] >= 0 && open[0] + open[1] == at) {
            open[1] += length;
            return;
          }
          if (open[0] >= 0) {
            sink.accept(open[0], open[1]);
          }
          open[0] = at;
          open[1] = length;
        };
    boolean full = usedTokens == tokensPerBlock;
    for (int layer = fromLayer; layer < toLayer; layer++) {
      for (int plane = 0; plane < planes; plane++) {
        long slab = slabOffset(block, layer, plane);
        if (full || order == MemoryOrder.BLOCK_MAJOR) {
          merging.accept(slab, (long) usedTokens * headCount * vectorBytes());
        } else {
          for (int h = 0; h < headCount; h++) {
            merging.accept(
                slab + (long) h * tokensPerBlock * vectorBytes(),
                (long) usedTokens * vectorBytes());
          }
        }
      }
    }
    if (open[0] >= 0) {
      sink.accept(open[0], open[1]);
    }
  }

  /** Whether this rank holds model-wide head {@code head}. */
  public boolean holds(int head) {
    return head >= headStart && head < headStart + headCount;
  }

  /**
   * Why KV of {@code producer}'s layout cannot be loaded into this one, naming the first field that
   * differs ("head_dim 128 vs 64": this engine's value, then the producer's), if it cannot. For an
   * engine that holds both layouts legitimately; to tell the engine that sent this layout why it is
   * refused, see {@link #incompatibilityQuotingOnlyThis}.
   */
  public Optional<String> incompatibilityWith(KvLayout producer) {
    return incompatibility(producer, true);
  }

  /**
   * {@link #incompatibilityWith}, quoting only this layout's value of the field that differs, never
   * {@code producer}'s ("head_dim 128 differs from the producer's"): what a producer may tell a
   * consumer whose layout (this one) it refuses, revealing of its own layout only which field does
   * not fit.
   */
  public Optional<String> incompatibilityQuotingOnlyThis(KvLayout producer) {
    return incompatibility(producer, false);
  }

  private Optional<String> incompatibility(KvLayout producer, boolean quoteProducer) {
    if (!model.equals(producer.model)) {
      return Optional.of("model " + model + against(producer.model, quoteProducer));
    }
    String[] names = {"dtype_bytes", "layers", "planes", "kv_heads", "head_dim"};
    int[] mine = {dtypeBytes, layers, planes, kvHeads, headDim};
    int[] theirs = {
      producer.dtypeBytes, producer.layers, producer.planes, producer.kvHeads, producer.headDim
    };
    for (int i = 0; i < names.length; i++) {
      if (mine[i] != theirs[i]) {
        return Optional.of(names[i] + " " + mine[i] + against(theirs[i], quoteProducer));
      }
    }
    int big = Math.max(tokensPerBlock, producer.tokensPerBlock);
    int small = Math.min(tokensPerBlock, producer.tokensPerBlock);
    if (big % small != 0) {
      return Optional.of(
          "tokens_per_block "
              + tokensPerBlock
              + against(producer.tokensPerBlock, quoteProducer)
              + ": one must be a multiple of the other");
    }
    return Optional.empty();
  }

  /** How a difference from the producer's value is written: quoting it, or not. */
  private static String against(Object producerValue, boolean quote) {
    return quote ? " vs " + producerValue : " differs from the producer's";
  }

  /**
   * The canonical encoding: {@code text model} (u16 length, UTF-8), {@code u8 dtype_bytes}, {@code
   * u16 layers}, {@code u8 planes}, {@code u16 kv_heads}, {@code u16 head_start}, {@code u16
   * head_count}, {@code u16 head_dim}, {@code u32 tokens_per_block}, {@code u32 block_count},
   * {@code u8 order} (0 block-major, 1 head-major), {@code u8 placement} (0 cross-layer, 1 per
   * layer, 2 per layer with blocks first, 3 per layer and plane), integers big-endian. The
   * handshake carries it and the read digest covers it.
   */
  public byte[] encode() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(64);
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      byte[] name = model.getBytes(StandardCharsets.UTF_8);
      out.writeShort(name.length);
      out.write(name);
      out.writeByte(dtypeBytes);
      out.writeShort(layers);
      out.writeByte(planes);
      out.writeShort(kvHeads);
      out.writeShort(headStart);
      out.writeShort(headCount);
      out.writeShort(headDim);
      out.writeInt(tokensPerBlock);
      out.writeInt(blockCount);
      out.writeByte(order.ordinal());
      out.writeByte(placement.ordinal());
    } catch (IOException e) {
      throw new UncheckedIOException("writing to memory cannot fail", e);
    }
    return bytes.toByteArray();
  }

  /**
   * Reads a layout in {@link #encode()}'s form from untrusted input.
   *
   * @throws IOException if the input ends early
   * @throws IllegalArgumentException if a value is out of range
   */
  public static KvLayout decode(DataInput in) throws IOException {
    int nameLength = in.readUnsignedShort();
    if (nameLength == 0 || nameLength > MAX_MODEL_BYTES) {
      throw new IllegalArgumentException("KV layout: model name of " + nameLength + " bytes");
    }
    byte[] name = new byte[nameLength];
    in.readFully(name);
    String model = new String(name, StandardCharsets.UTF_8);
    int dtype = in.readUnsignedByte();
    int layers = in.readUnsignedShort();
    int planes = in.readUnsignedByte();
    int kvHeads = in.readUnsignedShort();
    int headStart = in.readUnsignedShort();
    int headCount = in.readUnsignedShort();
    int headDim = in.readUnsignedShort();
    int tokensPerBlock = in.readInt();
    int blockCount = in.readInt();
    int order = in.readUnsignedByte();
    if (order >= MemoryOrder.values().length) {
      throw new IllegalArgumentException("KV layout: unknown memory order " + order);
    }
    int placement = in.readUnsignedByte();
    if (placement >= Placement.values().length) {
      throw new IllegalArgumentException("KV layout: unknown placement " + placement);
    }
    return new KvLayout(
        model,
        dtype,
        layers,
        planes,
        kvHeads,
        headStart,
        headCount,
        headDim,
        tokensPerBlock,
        blockCount,
        MemoryOrder.values()[order],
        Placement.values()[placement]);
  }

  /**
   * What keeps {@code ranks} (an engine's layouts, by rank) from being one engine's tensor-parallel
   * ranks, if anything: every rank must hold the same model, block size, block count and memory
   * (order and placement), and their heads, in rank order, must be consecutive and cover the
   * model's KV heads; a rank may hold exactly the heads of the rank before it again (replicated
   * KV), which a consumer then reads once, from one of the ranks holding them.
   */
  public static Optional<String> partitionProblem(List<KvLayout> ranks) {
    if (ranks.isEmpty()) {
      return Optional.of("an engine has at least one rank");
    }
    KvLayout first = ranks.get(0);
    int next = 0;
    for (int r = 0; r < ranks.size(); r++) {
      KvLayout rank = ranks.get(r);
      if (!rank.model.equals(first.model)
          || rank.dtypeBytes != first.dtypeBytes
          || rank.layers != first.layers
          || rank.planes != first.planes
          || rank.kvHeads != first.kvHeads
          || rank.headDim != first.headDim
          || rank.tokensPerBlock != first.tokensPerBlock
          || rank.blockCount != first.blockCount
          || rank.order != first.order
          || rank.placement != first.placement) {
        return Optional.of("rank " + r + "'s layout differs from rank 0's beyond its heads");
      }
      KvLayout before = r == 0 ? null : ranks.get(r - 1);
      boolean replica =
          before != null
              && rank.headStart == before.headStart
              && rank.headCount == before.headCount;
      if (replica) {
        continue;
      }
      if (rank.headStart != next) {
        return Optional.of(
            "rank "
                + r
                + " holds heads from "
                + rank.headStart
                + ", expected from "
                + next
                + " (or rank "
                + (r - 1)
                + "'s heads again)");
      }
      next += rank.headCount;
    }
    if (next != first.kvHeads) {
      return Optional.of(
          "the ranks hold " + next + " of the model's " + first.kvHeads + " KV heads");
    }
    return Optional.empty();
  }

  private static void positive(String field, int value) {
    if (value <= 0) {
      throw new IllegalArgumentException("KV layout: " + field + " must be positive, got " + value);
    }
  }
}
