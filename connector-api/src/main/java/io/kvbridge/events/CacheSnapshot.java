package io.kvbridge.events;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Every block an engine's caches hold, as of its batch {@code sequence}: a reader starts from it
 * and applies the batches numbered after it.
 *
 * @param engineId the engine's id
 * @param incarnation the engine's incarnation
 * @param sequence the last batch the snapshot includes (0: none yet)
 * @param model the model whose blocks these are, as {@link BlockHashes} names it
 * @param tokensPerBlock the engine's tokens per block
 * @param blockHashes every block held
 */
public record CacheSnapshot(
    String engineId,
    long incarnation,
    long sequence,
    String model,
    int tokensPerBlock,
    List<Long> blockHashes) {

  /** Checks the fields; copies the hashes. */
  public CacheSnapshot {
    EventFields.requireEngineId(engineId);
    Objects.requireNonNull(model, "model");
    if (sequence < 0) {
      throw new IllegalArgumentException("a snapshot's sequence is at least 0, got " + sequence);
    }
    if (tokensPerBlock < 1) {
      throw new IllegalArgumentException("tokens per block is at least 1, got " + tokensPerBlock);
    }
    blockHashes = List.copyOf(blockHashes);
    if (blockHashes.size() > EventFields.MAX_HASHES) {
      throw new IllegalArgumentException(
          "a snapshot names at most "
              + EventFields.MAX_HASHES
              + " blocks, got "
              + blockHashes.size());
    }
  }

  /** The JSON-ready form ({@code docs/events.md}). */
  public Map<String, Object> toMap() {
    Map<String, Object> map = new LinkedHashMap<>();
    map.put("engine_id", engineId);
    map.put("incarnation", EventFields.hex(incarnation));
    map.put("seq", sequence);
    map.put("model", model);
    map.put("tokens_per_block", tokensPerBlock);
    map.put("block_hashes", EventFields.hexes(blockHashes));
    return map;
  }

  /**
   * The snapshot {@code map} holds.
   *
   * @throws MalformedEventException naming the field that is wrong
   */
  public static CacheSnapshot fromMap(Map<String, ?> map) {
    return new CacheSnapshot(
        EventFields.engineId(map),
        EventFields.hexLong(map, "incarnation"),
        EventFields.count(map, "seq", 0),
        EventFields.string(map, "model"),
        Math.toIntExact(Math.min(Integer.MAX_VALUE, EventFields.count(map, "tokens_per_block", 1))),
        EventFields.hashes(map, "block_hashes", EventFields.MAX_HASHES));
  }
}
