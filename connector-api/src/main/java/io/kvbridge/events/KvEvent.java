package io.kvbridge.events;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** One change to what an engine's caches hold; its blocks named by {@link BlockHashes}. */
public sealed interface KvEvent {

  /** Blocks the engine now holds (a prompt's KV kept in its prefix cache). */
  record Stored(List<Long> blockHashes) implements KvEvent {
    /** Copies the list. */
    public Stored {
      blockHashes = List.copyOf(blockHashes);
    }
  }

  /** Blocks the engine no longer holds (evicted, or freed). */
  record Removed(List<Long> blockHashes) implements KvEvent {
    /** Copies the list. */
    public Removed {
      blockHashes = List.copyOf(blockHashes);
    }
  }

  /** The engine holds no block any more (its cache was cleared). */
  record Cleared() implements KvEvent {}

  /** How many block hashes the event names. */
  default int size() {
    if (this instanceof Stored s) {
      return s.blockHashes().size();
    }
    if (this instanceof Removed r) {
      return r.blockHashes().size();
    }
    return 0;
  }

  /** The JSON-ready form ({@code docs/events.md}). */
  default Map<String, Object> toMap() {
    Map<String, Object> map = new LinkedHashMap<>();
    if (this instanceof Stored s) {
      map.put("type", "stored");
      map.put("block_hashes", EventFields.hexes(s.blockHashes()));
    } else if (this instanceof Removed r) {
      map.put("type", "removed");
      map.put("block_hashes", EventFields.hexes(r.blockHashes()));
    } else {
      map.put("type", "cleared");
    }
    return map;
  }

  /**
   * The event {@code map} holds, naming at most {@code room} hashes.
   *
   * @throws MalformedEventException naming the field that is wrong
   */
  static KvEvent fromMap(Map<String, ?> map, int room) {
    String type = EventFields.string(map, "type");
    return switch (type) {
      case "stored" -> new Stored(EventFields.hashes(map, "block_hashes", room));
      case "removed" -> new Removed(EventFields.hashes(map, "block_hashes", room));
      case "cleared" -> new Cleared();
      default ->
          throw new MalformedEventException(
              "type", "must be stored, removed or cleared, got '" + type + "'");
    };
  }
}
