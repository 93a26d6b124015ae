package io.kvbridge.events;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Events an engine published together: the {@code sequence}-th batch of its incarnation {@code
 * incarnation}, numbered from 1 without gaps, so that a reader that sees a number skipped knows it
 * lost a batch and must start again from a {@link CacheSnapshot}.
 *
 * @param engineId the publishing engine's id
 * @param incarnation the engine's incarnation: a restarted engine publishes under a new one and
 *     numbers its batches from 1 again
 * @param sequence the batch's number in the incarnation, at least 1
 * @param events what changed, in order
 */
public record KvEventBatch(String engineId, long incarnation, long sequence, List<KvEvent> events) {

  /** The most block hashes one batch may name over all its events. */
  public static final int MAX_HASHES = 1 << 16;

  /** Checks the id, the sequence number and the number of hashes; copies the events. */
  public KvEventBatch {
    EventFields.requireEngineId(engineId);
    if (sequence < 1) {
      throw new IllegalArgumentException(
          "a batch's sequence number is at least 1, got " + sequence);
    }
    events = List.copyOf(Objects.requireNonNull(events, "events"));
    int hashes = events.stream().mapToInt(KvEvent::size).sum();
    if (hashes > MAX_HASHES) {
      throw new IllegalArgumentException(
          "a batch names at most " + MAX_HASHES + " block hashes, got " + hashes);
    }
  }

  /** The JSON-ready form ({@code docs/events.md}). */
  public Map<String, Object> toMap() {
    Map<String, Object> map = new LinkedHashMap<>();
    map.put("engine_id", engineId);
    map.put("incarnation", EventFields.hex(incarnation));
    map.put("seq", sequence);
    List<Map<String, Object>> list = new ArrayList<>(events.size());
    for (KvEvent e : events) {
      list.add(e.toMap());
    }
    map.put("events", list);
    return map;
  }

  /**
   * The batch {@code map} holds.
   *
   * @throws MalformedEventException naming the field that is wrong
   */
  public static KvEventBatch fromMap(Map<String, ?> map) {
    String engineId = EventFields.engineId(map);
    long incarnation = EventFields.hexLong(map, "incarnation");
    long sequence = EventFields.count(map, "seq", 1);
    if (!(map.get("events") instanceof List<?> raw)) {
      throw new MalformedEventException("events", "must be a list of events");
    }
    List<KvEvent> events = new ArrayList<>(raw.size());
    int room = MAX_HASHES;
    for (Object item : raw) {
      if (!(item instanceof Map<?, ?> event)) {
        throw new MalformedEventException("events", "holds something that is not an event");
      }
      @SuppressWarnings("unchecked")
      KvEvent parsed = KvEvent.fromMap((Map<String, ?>) event, room);
      room -= parsed.size();
      events.add(parsed);
    }
    return new KvEventBatch(engineId, incarnation, sequence, events);
  }
}
