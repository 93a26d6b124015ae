package io.kvbridge.spi;

import io.kvbridge.integrity.ChecksumScheme;
import io.kvbridge.integrity.PromptDigest;
import io.kvbridge.lease.LeaseToken;
import io.kvbridge.observe.TraceContext;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What P's {@link SchedulerSide#requestFinished} hands the router for D: where and how to read a
 * finished prefill's blocks. Travels through the router as a JSON object ({@link #toMap()}, {@link
 * #fromMap(Map)}), so every value read back is untrusted and checked.
 *
 * @param producerEngineId P's engine id
 * @param producerIncarnation the incarnation of P that granted the lease; a lease dies with its
 *     incarnation
 * @param requestId the request's id on P
 * @param blockIds P's blocks, in token order
 * @param tokens how many prompt tokens the blocks hold
 * @param promptDigest the {@link PromptDigest} of those tokens; D refuses parameters whose digest
 *     is not its own request's, and P refuses a read whose digest is not the lease's
 * @param leaseToken the lease's secret
 * @param deadlineNanos when the lease expires, on P's monotonic clock
 * @param handshakeAddress where P answers handshakes; absent when the consumer finds producers
 *     through its {@link PeerDirectory} (by engine id), in the written form of a {@link
 *     io.kvbridge.net.HandshakeAddress}; a consumer refuses parameters whose address does not parse
 * @param checksumScheme how P fingerprinted each block's content
 * @param blockChecksums per producer rank (one list per rank, in rank order), one checksum per
 *     block of {@code blockIds}, in the same order, over the block's used bytes; D checks what it
 *     read against them before it asks P to validate the read
 * @param traceContext the trace of the request's transfer path, as W3C {@code traceparent} and
 *     {@code tracestate}: D's spans join P's trace. Optional and never refused: malformed fields
 *     are read as {@link TraceContext.Ignored}, and the consumer counts and ignores them
 * @param streamed whether P grants the lease while it still computes the request and announces its
 *     layers as they are computed, each with its checksums (LAYERS notifications), instead of
 *     {@code blockChecksums}, which are then empty ({@link SchedulerSide#requestStarted})
 */
public record TransferParams(
    String producerEngineId,
    long producerIncarnation,
    String requestId,
    List<Integer> blockIds,
    int tokens,
    String promptDigest,
    String leaseToken,
    long deadlineNanos,
    Optional<String> handshakeAddress,
    ChecksumScheme checksumScheme,
    List<List<Integer>> blockChecksums,
    TraceContext traceContext,
    boolean streamed) {

  /** The most blocks one request may name; more is refused as malformed. */
  public static final int MAX_BLOCKS = 65_536;

  /** The most producer ranks parameters may name. */
  public static final int MAX_RANKS = 255;

  /** The longest id or address accepted. */
  public static final int MAX_TEXT = 256;

  /** Checks every field; throws {@link InvalidTransferParamsException} naming the bad one. */
  public TransferParams {
    requireText("producer_engine_id", producerEngineId);
    requireText("request_id", requestId);
    if (handshakeAddress == null) {
      throw new InvalidTransferParamsException("handshake_address must be absent or a string");
    }
    handshakeAddress.ifPresent(a -> requireText("handshake_address", a));
    if (blockIds == null || blockIds.isEmpty()) {
      throw new InvalidTransferParamsException("block_ids must name at least one block");
    }
    if (blockIds.size() > MAX_BLOCKS) {
      throw new InvalidTransferParamsException(
          "block_ids names " + blockIds.size() + " blocks, more than the limit " + MAX_BLOCKS);
    }
    for (Integer id : blockIds) {
      if (id == null || id < 0) {
        throw new InvalidTransferParamsException("block_ids holds " + id + "; block ids are >= 0");
      }
    }
    blockIds = List.copyOf(blockIds);
    if (tokens <= 0) {
      throw new InvalidTransferParamsException("tokens must be positive, got " + tokens);
    }
    if (!PromptDigest.isWellFormed(promptDigest)) {
      throw new InvalidTransferParamsException(
          "prompt_digest must be " + PromptDigest.HEX_LENGTH + " lowercase hex digits");
    }
    if (!LeaseToken.isWellFormed(leaseToken)) {
      throw new InvalidTransferParamsException("lease_token must be 32 lowercase hex digits");
    }
    if (checksumScheme == null) {
      throw new InvalidTransferParamsException("checksum_scheme is missing");
    }
    int blocks = blockIds.size();
    if (streamed && (blockChecksums == null || !blockChecksums.isEmpty())) {
      throw new InvalidTransferParamsException(
          "block_checksums must be empty when streamed: a streamed lease's checksums come with its"
              + " layers");
    }
    if (!streamed
        && (blockChecksums == null
            || blockChecksums.isEmpty()
            || blockChecksums.size() > MAX_RANKS
            || blockChecksums.stream().anyMatch(c -> c == null || c.size() != blocks))) {
      throw new InvalidTransferParamsException(
          "block_checksums must hold, for each of 1 to "
              + MAX_RANKS
              + " producer ranks, one checksum per block of block_ids ("
              + blockIds.size()
              + ")");
    }
    blockChecksums = blockChecksums.stream().<List<Integer>>map(List::copyOf).toList();
    if (traceContext == null) {
      throw new InvalidTransferParamsException("trace context must be absent or present, not null");
    }
  }

  /** Parameters of a lease granted once the request was computed (not streamed). */
  public TransferParams(
      String producerEngineId,
      long producerIncarnation,
      String requestId,
      List<Integer> blockIds,
      int tokens,
      String promptDigest,
      String leaseToken,
      long deadlineNanos,
      Optional<String> handshakeAddress,
      ChecksumScheme checksumScheme,
      List<List<Integer>> blockChecksums,
      TraceContext traceContext) {
    this(
        producerEngineId,
        producerIncarnation,
        requestId,
        blockIds,
        tokens,
        promptDigest,
        leaseToken,
        deadlineNanos,
        handshakeAddress,
        checksumScheme,
        blockChecksums,
        traceContext,
        false);
  }

  /** Parameters that carry no trace context. */
  public TransferParams(
      String producerEngineId,
      long producerIncarnation,
      String requestId,
      List<Integer> blockIds,
      int tokens,
      String promptDigest,
      String leaseToken,
      long deadlineNanos,
      Optional<String> handshakeAddress,
      ChecksumScheme checksumScheme,
      List<List<Integer>> blockChecksums) {
    this(
        producerEngineId,
        producerIncarnation,
        requestId,
        blockIds,
        tokens,
        promptDigest,
        leaseToken,
        deadlineNanos,
        handshakeAddress,
        checksumScheme,
        blockChecksums,
        TraceContext.ABSENT);
  }

  /** The JSON-ready form, with snake_case keys. */
  public Map<String, Object> toMap() {
    Map<String, Object> map = new LinkedHashMap<>();
    map.put("producer_engine_id", producerEngineId);
    map.put("producer_incarnation", HexFormat.of().toHexDigits(producerIncarnation));
    map.put("request_id", requestId);
    map.put("block_ids", blockIds);
    map.put("tokens", tokens);
    map.put("prompt_digest", promptDigest);
    map.put("lease_token", leaseToken);
    map.put("deadline_nanos", deadlineNanos);
    handshakeAddress.ifPresent(a -> map.put("handshake_address", a));
    map.put("checksum_scheme", checksumScheme.wireName());
    map.put(
        "block_checksums", blockChecksums.stream().map(TransferParams::checksumsToHex).toList());
    if (traceContext instanceof TraceContext.W3c w3c) {
      map.put("traceparent", w3c.traceparent());
      w3c.tracestate().ifPresent(state -> map.put("tracestate", state));
    }
    if (streamed) {
      map.put("streamed", true);
    }
    return map;
  }

  /**
   * Reads parameters from decoded JSON. The trace fields {@code traceparent} and {@code tracestate}
   * are never refused: when malformed they are read as {@link TraceContext.Ignored}.
   *
   * @throws InvalidTransferParamsException naming the first missing or malformed field
   */
  public static TransferParams fromMap(Map<String, ?> map) {
    if (map == null) {
      throw new InvalidTransferParamsException("missing");
    }
    // Fields are read in the order a reader of the JSON expects them named when they are missing.
    String producer = text(map, "producer_engine_id");
    String requestId = text(map, "request_id");
    return new TransferParams(
        producer,
        incarnation(text(map, "producer_incarnation")),
        requestId,
        blockIds(map.get("block_ids")),
        (int) integer(map, "tokens", Integer.MIN_VALUE, Integer.MAX_VALUE),
        text(map, "prompt_digest"),
        text(map, "lease_token"),
        integer(map, "deadline_nanos", Long.MIN_VALUE, Long.MAX_VALUE),
        map.containsKey("handshake_address")
            ? Optional.of(text(map, "handshake_address"))
            : Optional.empty(),
        scheme(text(map, "checksum_scheme")),
        checksumsPerRank(map.get("block_checksums")),
        TraceContext.read(map.get("traceparent"), map.get("tracestate")),
        streamed(map.get("streamed")));
  }

  private static boolean streamed(Object value) {
    if (value == null) {
      return false;
    }
    if (value instanceof Boolean b) {
      return b;
    }
    throw new InvalidTransferParamsException(
        "streamed must be true or false, got " + typeOf(value));
  }

  /** Writes checksums as 8 lowercase hex digits each, big-endian, concatenated. */
  private static String checksumsToHex(List<Integer> checksums) {
    StringBuilder hex = new StringBuilder(checksums.size() * 8);
    HexFormat format = HexFormat.of();
    for (int checksum : checksums) {
      hex.append(format.toHexDigits(checksum));
    }
    return hex.toString();
  }

  private static List<List<Integer>> checksumsPerRank(Object value) {
    // Empty for a streamed lease; the constructor refuses an empty list otherwise.
    if (!(value instanceof List<?> ranks) || ranks.size() > MAX_RANKS) {
      throw new InvalidTransferParamsException(
          "block_checksums must be a list of 1 to "
              + MAX_RANKS
              + " strings, one per producer rank (none when streamed), got "
              + typeOf(value));
    }
    List<List<Integer>> out = new ArrayList<>(ranks.size());
    for (Object rank : ranks) {
      if (!(rank instanceof String hex)) {
        throw new InvalidTransferParamsException(
            "block_checksums must hold strings of hex digits, got " + typeOf(rank));
      }
      out.add(checksumsFromHex(hex));
    }
    return out;
  }

  private static List<Integer> checksumsFromHex(String hex) {
    if (hex.length() % 8 != 0 || hex.length() / 8 > MAX_BLOCKS) {
      throw new InvalidTransferParamsException(
          "block_checksums must be 8 hex digits per block, at most " + MAX_BLOCKS + " blocks");
    }
    List<Integer> checksums = new ArrayList<>(hex.length() / 8);
    for (int i = 0; i < hex.length(); i += 8) {
      String digits = hex.substring(i, i + 8);
      if (!digits.chars().allMatch(c -> (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
        throw new InvalidTransferParamsException(
            "block_checksums must be lowercase hex digits, got '" + digits + "'");
      }
      checksums.add(HexFormat.fromHexDigits(digits));
    }
    return checksums;
  }

  private static long incarnation(String hex) {
    if (hex.length() != 16
        || !hex.chars().allMatch(c -> (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
      throw new InvalidTransferParamsException(
          "producer_incarnation must be 16 lowercase hex digits");
    }
    return HexFormat.fromHexDigitsToLong(hex);
  }

  private static ChecksumScheme scheme(String name) {
    return ChecksumScheme.fromWireName(name)
        .orElseThrow(
            () ->
                new InvalidTransferParamsException(
                    "checksum_scheme '"
                        + (name.length() > 32 ? name.substring(0, 32) + "…" : name)
                        + "' is unknown; known: crc32c, crc32c-sampled"));
  }

  private static void requireText(String field, String value) {
    if (value == null || value.isBlank()) {
      throw new InvalidTransferParamsException(field + " is missing or blank");
    }
    if (value.length() > MAX_TEXT) {
      throw new InvalidTransferParamsException(
          field + " is " + value.length() + " characters, more than " + MAX_TEXT);
    }
  }

  private static String text(Map<String, ?> map, String field) {
    Object value = map.get(field);
    if (!(value instanceof String s)) {
      throw new InvalidTransferParamsException(field + " must be a string, got " + typeOf(value));
    }
    return s;
  }

  private static long integer(Map<String, ?> map, String field, long min, long max) {
    Object value = map.get(field);
    if (!(value instanceof Integer || value instanceof Long || value instanceof Short)) {
      throw new InvalidTransferParamsException(field + " must be an integer, got " + typeOf(value));
    }
    long v = ((Number) value).longValue();
    if (v < min || v > max) {
      throw new InvalidTransferParamsException(field + " is out of range: " + v);
    }
    return v;
  }

  private static List<Integer> blockIds(Object value) {
    if (!(value instanceof List<?> list)) {
      throw new InvalidTransferParamsException("block_ids must be a list, got " + typeOf(value));
    }
    if (list.size() > MAX_BLOCKS) {
      throw new InvalidTransferParamsException(
          "block_ids names " + list.size() + " blocks, more than the limit " + MAX_BLOCKS);
    }
    List<Integer> ids = new ArrayList<>(list.size());
    for (Object item : list) {
      if (!(item instanceof Integer i)) {
        throw new InvalidTransferParamsException(
            "block_ids must hold integers, got " + typeOf(item));
      }
      ids.add(i);
    }
    return ids;
  }

  /** The JSON type of a decoded value, as a client wrote it. */
  private static String typeOf(Object value) {
    if (value == null) {
      return "nothing";
    }
    if (value instanceof String) {
      return "a string";
    }
    if (value instanceof Number) {
      return "a number";
    }
    if (value instanceof Boolean) {
      return "a boolean";
    }
    if (value instanceof Collection<?>) {
      return "a list";
    }
    if (value instanceof Map<?, ?>) {
      return "an object";
    }
    return "a value of another kind";
  }
}
