package io.kvbridge.events;

import io.kvbridge.integrity.Hex;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/** Reading and writing the fields the formats of {@code docs/events.md} share. */
final class EventFields {

  /** The most block hashes one batch or snapshot may name. */
  static final int MAX_HASHES = 1 << 22;

  private static final Pattern ENGINE_ID = Pattern.compile("[^\\p{Cntrl}]{1,256}");

  private EventFields() {}

  static String hex(long value) {
    return String.format("%016x", value);
  }

  static List<String> hexes(List<Long> values) {
    List<String> out = new ArrayList<>(values.size());
    for (long v : values) {
      out.add(hex(v));
    }
    return out;
  }

  static String engineId(Map<String, ?> map) {
    String id = string(map, "engine_id");
    if (!ENGINE_ID.matcher(id).matches() || id.isBlank()) {
      throw new MalformedEventException(
          "engine_id", "must be 1 to 256 characters, not blank, no control characters");
    }
    return id;
  }

  static void requireEngineId(String id) {
    if (id == null || id.isBlank() || !ENGINE_ID.matcher(id).matches()) {
      throw new IllegalArgumentException(
          "an engine id is 1 to 256 characters, not blank, with no control characters");
    }
  }

  static String string(Map<String, ?> map, String field) {
    Object value = map.get(field);
    if (!(value instanceof String s)) {
      throw new MalformedEventException(field, "must be a string, got " + describe(value));
    }
    return s;
  }

  static long hexLong(Map<String, ?> map, String field) {
    return parseHex(string(map, field), field);
  }

  static long count(Map<String, ?> map, String field, long min) {
    Object value = map.get(field);
    if (!(value instanceof Number n)
        || value instanceof Double
        || value instanceof Float
        || n.longValue() < min) {
      throw new MalformedEventException(
          field, "must be an integer of at least " + min + ", got " + describe(value));
    }
    return n.longValue();
  }

  static List<Long> hashes(Map<String, ?> map, String field, int room) {
    Object value = map.get(field);
    if (!(value instanceof List<?> list)) {
      throw new MalformedEventException(field, "must be a list of hashes, got " + describe(value));
    }
    if (list.size() > room) {
      throw new MalformedEventException(
          field, "names " + list.size() + " hashes, more than the " + room + " allowed");
    }
    List<Long> out = new ArrayList<>(list.size());
    for (Object item : list) {
      if (!(item instanceof String s)) {
        throw new MalformedEventException(field, "holds " + describe(item) + ", not a hash");
      }
      out.add(parseHex(s, field));
    }
    return out;
  }

  private static long parseHex(String text, String field) {
    if (!Hex.isLowercaseHex(text, 16)) {
      throw new MalformedEventException(
          field, "a hash is 16 lowercase hexadecimal digits, got '" + text + "'");
    }
    return Long.parseUnsignedLong(text, 16);
  }

  private static String describe(Object value) {
    return value == null ? "nothing" : value.getClass().getSimpleName() + " " + value;
  }
}
