package io.kvbridge.spring;

import io.kvbridge.spi.ConnectorProperties;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;

/**
 * Reads the connectors' own settings from an application's configuration: every property under
 * {@code kvbridge.<type>.}, for each connector type on the class path, becomes the connector
 * property {@code <type>.<name>}, e.g. {@code kvbridge.nixl.memory} becomes {@code nixl.memory}.
 * The connectors check them; the starter only carries them.
 *
 * <p>A list written item by item ({@code kvbridge.nixl.backends[0]=UCX}, or a YAML list) becomes
 * one comma-separated value, as the connectors read lists.
 *
 * <p>Stateless; safe for use from any thread.
 */
final class ConnectorPropertyBinding {

  private static final String PREFIX = "kvbridge.";

  /** Properties here would reach no connector: refused rather than silently ignored. */
  private static final String UNREAD_PREFIX = PREFIX + "properties";

  /**
   * A list item as the binder names it: {@code backends[0]} (or {@code backends.0}) is {@code
   * backends.0}.
   */
  private static final Pattern ITEM = Pattern.compile("(.+)\\.(\\d+)");

  private ConnectorPropertyBinding() {}

  /**
   * The connector properties {@code binder} holds for {@code types}.
   *
   * @throws InvalidKvBridgePropertyException for a property under {@code kvbridge.properties.},
   *     naming where to set it, or for a list set both as one value and item by item
   */
  static ConnectorProperties bind(Binder binder, List<String> types) {
    refuseUnreadPrefix(binder);
    Map<String, String> all = new TreeMap<>();
    for (String type : types) {
      if (!ConfigurationPropertyName.isValid(PREFIX + type)) {
        continue; // a type no property name can hold has no properties under Spring
      }
      Map<String, String> bound =
          binder.bind(PREFIX + type, Bindable.mapOf(String.class, String.class)).orElseGet(Map::of);
      joinItems(type, bound).forEach((name, value) -> all.put(type + "." + name, value));
    }
    return ConnectorProperties.of(all);
  }

  private static void refuseUnreadPrefix(Binder binder) {
    Map<String, String> unread =
        binder.bind(UNREAD_PREFIX, Bindable.mapOf(String.class, String.class)).orElseGet(Map::of);
    if (!unread.isEmpty()) {
      String name = new TreeMap<>(unread).firstKey();
      String property = UNREAD_PREFIX + "." + name;
      throw new InvalidKvBridgePropertyException(
          property,
          property
              + " is not read: a connector's properties are set under kvbridge.<type>., here "
              + PREFIX
              + name);
    }
  }

  /** {@code bound} with the items of each list ({@code name.<i>}) joined into one value. */
  private static Map<String, String> joinItems(String type, Map<String, String> bound) {
    Map<String, String> out = new TreeMap<>();
    Map<String, TreeMap<Integer, String>> lists = new TreeMap<>();
    bound.forEach(
        (name, value) -> {
          Matcher item = ITEM.matcher(name);
          if (item.matches()) {
            lists
                .computeIfAbsent(item.group(1), n -> new TreeMap<>())
                .put(Integer.valueOf(item.group(2)), value);
          } else {
            out.put(name, value);
          }
        });
    lists.forEach(
        (name, items) -> {
          if (out.containsKey(name)) {
            String property = PREFIX + type + "." + name;
            throw new InvalidKvBridgePropertyException(
                property, property + " is set both as one value and item by item; set it once");
          }
          out.put(name, String.join(",", new ArrayList<>(items.values())));
        });
    return out;
  }
}
