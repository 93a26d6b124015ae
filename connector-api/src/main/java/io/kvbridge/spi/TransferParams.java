package io.kvbridge.spi;

import io.kvbridge.lease.LeaseToken;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What P's {@link SchedulerSide#requestFinished} hands the router for D: where and how to read a
 * finished prefill's blocks. Travels through the router as a JSON object ({@link #toMap()}, {@link
 * #fromMap(Map)}), so every value read back is untrusted and checked.
 *
 * @param producerEngineId P's engine id
 * @param requestId the request's id on P
 * @param blockIds P's blocks, in token order
 * @param tokens how many prompt tokens the blocks hold
 * @param leaseToken the lease's secret
 * @param deadlineNanos when the lease expires, on P's monotonic clock
 * @param handshakeAddress where P answers handshakes
 */
public record TransferParams(
    String producerEngineId,
    String requestId,
    List<Integer> blockIds,
    int tokens,
    String leaseToken,
    long deadlineNanos,
    String handshakeAddress) {

  /** The most blocks one request may name; more is refused as malformed. */
  public static final int MAX_BLOCKS = 65_536;

  /** The longest id or address accepted. */
  public static final int MAX_TEXT = 256;

  /** Checks every field; throws {@link InvalidTransferParamsException} naming the bad one. */
  public TransferParams {
    requireText("producer_engine_id", producerEngineId);
    requireText("request_id", requestId);
    requireText("handshake_address", handshakeAddress);
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
    if (!LeaseToken.isWellFormed(leaseToken)) {
      throw new InvalidTransferParamsException("lease_token must be 32 lowercase hex digits");
    }
  }

  /** The JSON-ready form, with snake_case keys. */
  public Map<String, Object> toMap() {
    Map<String, Object> map = new LinkedHashMap<>();
    map.put("producer_engine_id", producerEngineId);
    map.put("request_id", requestId);
    map.put("block_ids", blockIds);
    map.put("tokens", tokens);
    map.put("lease_token", leaseToken);
    map.put("deadline_nanos", deadlineNanos);
    map.put("handshake_address", handshakeAddress);
    return map;
  }

  /**
   * Reads parameters from decoded JSON.
   *
   * @throws InvalidTransferParamsException naming the first missing or malformed field
   */
  public static TransferParams fromMap(Map<String, ?> map) {
    if (map == null) {
      throw new InvalidTransferParamsException("missing");
    }
    return new TransferParams(
        text(map, "producer_engine_id"),
        text(map, "request_id"),
        blockIds(map.get("block_ids")),
        (int) integer(map, "tokens", Integer.MIN_VALUE, Integer.MAX_VALUE),
        text(map, "lease_token"),
        integer(map, "deadline_nanos", Long.MIN_VALUE, Long.MAX_VALUE),
        text(map, "handshake_address"));
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

  private static String typeOf(Object value) {
    return value == null ? "nothing" : Objects.toString(value.getClass().getSimpleName());
  }
}
