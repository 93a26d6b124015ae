package io.kvbridge.spi;

import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A connector's own settings, as text keyed by name (e.g. {@code nixl.memory}), read through typed
 * accessors that share one error type. Every accessor that finds a value it cannot use throws
 * {@link InvalidSettingException} naming the property, the value and what is accepted.
 *
 * <p>Immutable; safe for use from any thread.
 */
public final class ConnectorProperties {

  /** No properties. */
  public static final ConnectorProperties EMPTY = new ConnectorProperties(Map.of());

  private static final Pattern DURATION = Pattern.compile("(\\d+)\\s*(ns|us|ms|s|m|h|d)");
  private static final Pattern SIZE = Pattern.compile("(\\d+)\\s*(B|KB|KiB|MB|MiB|GB|GiB)?");

  private final Map<String, String> values;

  private ConnectorProperties(Map<String, String> values) {
    this.values = values;
  }

  /** Properties over a copy of {@code values}. */
  public static ConnectorProperties of(Map<String, String> values) {
    return values.isEmpty() ? EMPTY : new ConnectorProperties(Map.copyOf(values));
  }

  /** Every property, sorted by name. */
  public Map<String, String> asMap() {
    return new TreeMap<>(values);
  }

  /** The text of {@code key}, if set. */
  public Optional<String> string(String key) {
    return Optional.ofNullable(values.get(key));
  }

  /** The text of {@code key}, or {@code otherwise}; a set value must not be blank. */
  public String string(String key, String otherwise) {
    String value = values.get(key);
    if (value == null) {
      return otherwise;
    }
    if (value.isBlank()) {
      throw invalid(key, value, "a non-blank value");
    }
    return value.trim();
  }

  /** {@code true} or {@code false} (any case), or {@code otherwise} when unset. */
  public boolean bool(String key, boolean otherwise) {
    String value = values.get(key);
    if (value == null) {
      return otherwise;
    }
    String v = value.trim();
    if (v.equalsIgnoreCase("true") || v.equalsIgnoreCase("false")) {
      return Boolean.parseBoolean(v);
    }
    throw invalid(key, value, "true or false");
  }

  /** A whole number in {@code [min, max]}, or {@code otherwise} when unset. */
  public long integer(String key, long otherwise, long min, long max) {
    String value = values.get(key);
    if (value == null) {
      return otherwise;
    }
    long parsed;
    try {
      parsed = Long.parseLong(value.trim());
    } catch (NumberFormatException e) {
      throw invalid(key, value, "a whole number between " + min + " and " + max);
    }
    if (parsed < min || parsed > max) {
      throw invalid(key, value, "a whole number between " + min + " and " + max);
    }
    return parsed;
  }

  /**
   * A positive duration such as {@code 500ms}, {@code 5s}, {@code 2m} or ISO-8601 {@code PT5S}, or
   * {@code otherwise} when unset.
   */
  public Duration duration(String key, Duration otherwise) {
    String value = values.get(key);
    if (value == null) {
      return otherwise;
    }
    String v = value.trim();
    Duration parsed = null;
    Matcher m = DURATION.matcher(v);
    if (m.matches()) {
      long n = Long.parseLong(m.group(1));
      parsed =
          switch (m.group(2)) {
            case "ns" -> Duration.ofNanos(n);
            case "us" -> Duration.ofNanos(n * 1_000);
            case "ms" -> Duration.ofMillis(n);
            case "s" -> Duration.ofSeconds(n);
            case "m" -> Duration.ofMinutes(n);
            case "h" -> Duration.ofHours(n);
            default -> Duration.ofDays(n);
          };
    } else {
      try {
        parsed = Duration.parse(v);
      } catch (DateTimeParseException e) {
        // reported below
      }
    }
    if (parsed == null || parsed.isNegative() || parsed.isZero()) {
      throw invalid(key, value, "a positive duration such as 500ms, 5s or 2m");
    }
    return parsed;
  }

  /**
   * A size in bytes such as {@code 4096}, {@code 64KiB}, {@code 16MiB} or {@code 1GB}, or {@code
   * otherwise} when unset.
   */
  public long bytes(String key, long otherwise) {
    String value = values.get(key);
    if (value == null) {
      return otherwise;
    }
    Matcher m = SIZE.matcher(value.trim());
    if (!m.matches()) {
      throw invalid(key, value, "a size in bytes such as 4096, 64KiB or 16MiB");
    }
    long unit =
        switch (m.group(2) == null ? "B" : m.group(2)) {
          case "KB" -> 1_000L;
          case "KiB" -> 1L << 10;
          case "MB" -> 1_000_000L;
          case "MiB" -> 1L << 20;
          case "GB" -> 1_000_000_000L;
          case "GiB" -> 1L << 30;
          default -> 1L;
        };
    try {
      return Math.multiplyExact(Long.parseLong(m.group(1)), unit);
    } catch (ArithmeticException | NumberFormatException e) {
      throw invalid(key, value, "a size that fits in 63 bits");
    }
  }

  /** Comma-separated non-empty names, or {@code otherwise} when unset. */
  public List<String> list(String key, List<String> otherwise) {
    String value = values.get(key);
    if (value == null) {
      return otherwise;
    }
    List<String> out = new ArrayList<>();
    for (String part : value.split(",", -1)) {
      String name = part.trim();
      if (name.isEmpty()) {
        throw invalid(key, value, "comma-separated names without empty entries");
      }
      out.add(name);
    }
    return List.copyOf(out);
  }

  /**
   * One of {@code type}'s constants, written in any case with {@code -} for {@code _}, or {@code
   * otherwise} when unset.
   */
  public <E extends Enum<E>> E choice(String key, Class<E> type, E otherwise) {
    String value = values.get(key);
    if (value == null) {
      return otherwise;
    }
    String wanted = value.trim().replace('-', '_').toUpperCase(Locale.ROOT);
    for (E constant : type.getEnumConstants()) {
      if (constant.name().equals(wanted)) {
        return constant;
      }
    }
    List<String> accepted = new ArrayList<>();
    for (E constant : type.getEnumConstants()) {
      accepted.add(constant.name().toLowerCase(Locale.ROOT).replace('_', '-'));
    }
    throw invalid(key, value, "one of " + String.join(", ", accepted));
  }

  /** A file system path, if set. */
  public Optional<Path> path(String key) {
    String value = values.get(key);
    if (value == null) {
      return Optional.empty();
    }
    try {
      if (value.isBlank()) {
        throw new InvalidPathException(value, "blank");
      }
      return Optional.of(Path.of(value.trim()));
    } catch (InvalidPathException e) {
      throw invalid(key, value, "a file system path");
    }
  }

  /**
   * The properties under {@code prefix} (e.g. {@code nixl.backend.UCX.}), with the prefix removed
   * from their names.
   */
  public Map<String, String> under(String prefix) {
    Map<String, String> out = new TreeMap<>();
    values.forEach(
        (k, v) -> {
          if (k.startsWith(prefix)) {
            out.put(k.substring(prefix.length()), v);
          }
        });
    return out;
  }

  /**
   * Refuses any property under {@code prefix} (e.g. {@code nixl.}) that is neither one of {@code
   * known} nor under one of {@code openPrefixes}.
   */
  public void requireOnlyKnown(String prefix, Collection<String> known, String... openPrefixes) {
    for (String key : new TreeMap<>(values).keySet()) {
      if (!key.startsWith(prefix) || known.contains(key)) {
        continue;
      }
      boolean open = false;
      for (String p : openPrefixes) {
        open |= key.startsWith(p);
      }
      if (!open) {
        List<String> names = new ArrayList<>(known);
        for (String p : openPrefixes) {
          names.add(p + "*");
        }
        throw new InvalidSettingException(key, "is unknown; known: " + String.join(", ", names));
      }
    }
  }

  @Override
  public String toString() {
    return "ConnectorProperties" + asMap();
  }

  private static InvalidSettingException invalid(String key, String value, String accepted) {
    String shown = value.length() > 64 ? value.substring(0, 64) + "…" : value;
    return new InvalidSettingException(key, "'" + shown + "' is not " + accepted);
  }
}
