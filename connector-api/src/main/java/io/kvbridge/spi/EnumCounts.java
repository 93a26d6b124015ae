package io.kvbridge.spi;

import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;

/** Counts by enum constant as the status records hold them. */
final class EnumCounts {

  private EnumCounts() {}

  /**
   * An unmodifiable copy of {@code counts} with every constant of {@code type}, in declaration
   * order, zero where {@code counts} has none; readers of the status (and its JSON) see every key.
   */
  static <E extends Enum<E>> Map<E, Long> complete(Class<E> type, Map<E, Long> counts) {
    Map<E, Long> all = new EnumMap<>(type);
    for (E key : type.getEnumConstants()) {
      all.put(key, counts.getOrDefault(key, 0L));
    }
    return Collections.unmodifiableMap(all);
  }
}
