package io.kvbridge.sample.engine;

import io.kvbridge.layout.KvLayout;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.List;

/**
 * A deterministic stand-in for a language model, shaped so that a KV transfer is checkable end to
 * end.
 *
 * <ul>
 *   <li>Tokens are the prompt's UTF-8 bytes.
 *   <li>The KV of token {@code i} depends on the whole prefix {@code [0..i]}: a running 64-bit hash
 *       of the prefix seeds a generator that fills {@link #bytesPerToken()} bytes. A block holding
 *       the wrong prefix, or bytes of the wrong position, has different contents.
 *   <li>A token's KV is the model's head vectors in (layer, plane, head) order: {@link #LAYERS}
 *       layers, K and V, {@link #KV_HEADS} KV heads of {@link #HEAD_DIM} elements of {@link
 *       #DTYPE_BYTES} bytes ({@link #layout}). Tensor-parallel ranks each hold some of the heads,
 *       so every rank holds part of every token's KV.
 *   <li>Generation digests every byte of the request's KV (SHA-256) and draws the output words from
 *       that digest, so a single corrupted, missing or stale byte anywhere, on any rank, changes
 *       the output.
 * </ul>
 *
 * <p>Immutable and thread-safe.
 */
public final class ToyModel {

  /** The model's identity: engines exchange blocks only if their layouts name the same model. */
  public static final String NAME = "kvbridge-toy-model-v1";

  /** The model's layers. */
  public static final int LAYERS = 2;

  /**
   * The model's KV heads, split among an engine's tensor-parallel ranks: 1, 2 or 4 ranks, or 8
   * ranks each holding one head that another rank holds too.
   */
  public static final int KV_HEADS = 4;

  /** Elements per head vector. */
  public static final int HEAD_DIM = 4;

  /** Bytes per element, as fp16 or bf16. */
  public static final int DTYPE_BYTES = 2;

  /** Bytes of KV per token over every layer, plane and head: 128. */
  public static final int BYTES_PER_TOKEN = LAYERS * 2 * KV_HEADS * HEAD_DIM * DTYPE_BYTES;

  private static final long GOLDEN = 0x9E3779B97F4A7C15L;

  private static final String[] VOCABULARY = {
    "the",
    "cache",
    "block",
    "moves",
    "from",
    "prefill",
    "to",
    "decode",
    "and",
    "lease",
    "ends",
    "read",
    "bytes",
    "token",
    "engine",
    "router",
    "quickly",
    "safely",
    "every",
    "step",
    "node",
    "keeps",
    "frees",
    "its",
    "memory",
    "when",
    "a",
    "deadline",
    "passes",
    "while",
    "heartbeats",
    "renew",
    "what",
    "is",
    "still",
    "needed",
    "so",
    "nothing",
    "leaks",
    "or",
    "breaks"
  };

  private final int bytesPerToken;

  /** A model producing {@code bytesPerToken} bytes of KV per token. */
  public ToyModel(int bytesPerToken) {
    if (bytesPerToken <= 0) {
      throw new IllegalArgumentException("bytes per token must be positive, got " + bytesPerToken);
    }
    this.bytesPerToken = bytesPerToken;
  }

  /** The toy model at its own shape: {@link #BYTES_PER_TOKEN} bytes of KV per token. */
  public static ToyModel standard() {
    return new ToyModel(BYTES_PER_TOKEN);
  }

  /**
   * The whole model's KV layout (every head), for engines with blocks of {@code tokensPerBlock}
   * tokens, {@code blockCount} blocks and memory order {@code order}; each rank of an engine holds
   * {@link KvLayout#forRank its share}.
   */
  public static KvLayout layout(int tokensPerBlock, int blockCount, KvLayout.MemoryOrder order) {
    return new KvLayout(
        NAME,
        DTYPE_BYTES,
        LAYERS,
        2,
        KV_HEADS,
        0,
        KV_HEADS,
        HEAD_DIM,
        tokensPerBlock,
        blockCount,
        order);
  }

  /** Bytes of KV per token. */
  public int bytesPerToken() {
    return bytesPerToken;
  }

  /** How many tokens {@link #tokenize} makes of {@code prompt}: its length in UTF-8 bytes. */
  public static int tokenCount(String prompt) {
    return prompt.getBytes(StandardCharsets.UTF_8).length;
  }

  /** The prompt's tokens: its UTF-8 bytes, as unsigned values. */
  public int[] tokenize(String prompt) {
    return tokensOf(prompt);
  }

  /** The tokens any toy model makes of {@code prompt}: its UTF-8 bytes, as unsigned values. */
  public static int[] tokensOf(String prompt) {
    byte[] bytes = prompt.getBytes(StandardCharsets.UTF_8);
    int[] tokens = new int[bytes.length];
    for (int i = 0; i < bytes.length; i++) {
      tokens[i] = bytes[i] & 0xFF;
    }
    return tokens;
  }

  /** Receives the KV of one token as {@link #computeKv} produces it. */
  @FunctionalInterface
  public interface KvSink {
    /** Token {@code index} has KV {@code kv} (a fresh array the sink may keep). */
    void accept(int index, byte[] kv);
  }

  /**
   * Computes the KV of tokens {@code [from, to)} of {@code tokens} and hands each to {@code sink}.
   */
  public void computeKv(int[] tokens, int from, int to, KvSink sink) {
    if (from < 0 || to > tokens.length || from > to) {
      throw new IllegalArgumentException(
          "token range [" + from + ", " + to + ") is outside a prompt of " + tokens.length);
    }
    long prefix = GOLDEN;
    for (int i = 0; i < to; i++) {
      prefix = mix(prefix ^ (tokens[i] + 1L) * GOLDEN);
      if (i >= from) {
        sink.accept(i, kvOf(prefix, i));
      }
    }
  }

  /** The KV of every token of {@code tokens}, in token order, as one array. */
  public byte[] computeAllKv(int[] tokens) {
    byte[] all = new byte[tokens.length * bytesPerToken];
    computeKv(
        tokens,
        0,
        tokens.length,
        (i, kv) -> System.arraycopy(kv, 0, all, i * bytesPerToken, bytesPerToken));
    return all;
  }

  /**
   * Generates {@code maxTokens} output words from the KV of a whole prompt ({@code kv} holds every
   * token's KV in token order).
   */
  public List<String> generate(byte[] kv, int maxTokens) {
    if (maxTokens < 1) {
      throw new IllegalArgumentException("max tokens must be at least 1, got " + maxTokens);
    }
    byte[] digest = sha256(kv);
    long seed = 0;
    for (int i = 0; i < 8; i++) {
      seed = (seed << 8) | (digest[i] & 0xFF);
    }
    List<String> words = new ArrayList<>(maxTokens);
    for (int k = 0; k < maxTokens; k++) {
      seed = mix(seed + GOLDEN);
      words.add(VOCABULARY[(int) Long.remainderUnsigned(seed, VOCABULARY.length)]);
    }
    return List.copyOf(words);
  }

  /** The completion text of {@code words}: each word preceded by a space, as tokens print. */
  public static String text(List<String> words) {
    StringBuilder out = new StringBuilder();
    for (String w : words) {
      out.append(' ').append(w);
    }
    return out.toString();
  }

  /** The colocated reference: the completion of {@code prompt} computed entirely locally. */
  public String referenceCompletion(String prompt, int maxTokens) {
    return text(generate(computeAllKv(tokenize(prompt)), maxTokens));
  }

  private byte[] kvOf(long prefixHash, int position) {
    byte[] kv = new byte[bytesPerToken];
    long state = prefixHash ^ ((long) position * 0xD1B54A32D192ED03L);
    for (int j = 0; j < bytesPerToken; j += 8) {
      state += GOLDEN;
      long r = mix(state);
      for (int k = 0; k < 8 && j + k < bytesPerToken; k++) {
        kv[j + k] = (byte) (r >>> (8 * k));
      }
    }
    return kv;
  }

  /** SplitMix64's finalizer: a bijective, well-mixing 64-bit scramble. */
  private static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  private static byte[] sha256(byte[] bytes) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(bytes);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK provides SHA-256", e);
    }
  }
}
