package io.kvbridge.sample;

import io.kvbridge.spring.InvalidKvBridgePropertyException;
import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.springframework.beans.factory.config.BeanFactoryPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.core.env.Environment;

/**
 * Refuses, before any bean is created, a property under {@code kvbridge.sample.} that {@link
 * SampleProperties} does not have: a misspelt or renamed setting (say {@code
 * kvbridge.sample.router.decode-url}, now {@code decode-urls}) would otherwise be ignored and its
 * default used. Start-up stops with {@link InvalidKvBridgePropertyException}, reported as any
 * invalid {@code kvbridge.*} property is, naming every unknown property and, where a known one is
 * close, suggesting it.
 *
 * <p>The known names are {@link SampleProperties}' record components, nested records included, in
 * the dashed form; a list's items ({@code [0]}) belong to it. Names from environment variables are
 * compared in the forms Spring Boot binds them from ({@code KVBRIDGE_SAMPLE_ROUTER_DECODEURLS} and
 * {@code KVBRIDGE_SAMPLE_ROUTER_DECODE_URLS} both set {@code decode-urls}).
 *
 * <p>Stateless; safe for use from any thread.
 */
final class SamplePropertyNames implements BeanFactoryPostProcessor {

  /** Where the sample's properties live. */
  static final String PREFIX = "kvbridge.sample";

  /** The farthest a known name may be from an unknown one to be suggested, in edits. */
  private static final int MOST_EDITS_SUGGESTED = 3;

  private static final Pattern INDEXES = Pattern.compile("(\\[[^\\]]*\\])+$");

  private final Environment environment;

  /** Checks the properties of {@code environment}. */
  SamplePropertyNames(Environment environment) {
    this.environment = environment;
  }

  @Override
  public void postProcessBeanFactory(ConfigurableListableBeanFactory beanFactory) {
    check(environment);
  }

  /**
   * Refuses the properties under {@code kvbridge.sample.} in {@code environment} that are not the
   * sample's.
   *
   * @throws InvalidKvBridgePropertyException naming the first unknown property, its message naming
   *     each, with the known property each is closest to where one is close
   */
  static void check(Environment environment) {
    List<String> unknown = unknown(ConfigurationPropertySources.get(environment));
    if (unknown.isEmpty()) {
      return;
    }
    String each =
        unknown.stream()
            .map(name -> name + suggestion(name).map(s -> " (did you mean " + s + "?)").orElse(""))
            .collect(Collectors.joining(", "));
    throw new InvalidKvBridgePropertyException(
        unknown.get(0),
        (unknown.size() == 1 ? each + " is not a property" : each + " are not properties")
            + " of the sample app, which would ignore "
            + (unknown.size() == 1 ? "it" : "them")
            + "; its properties are listed in sample-app/README.md");
  }

  /** The names under {@code kvbridge.sample.} in {@code sources} that no sample property has. */
  static List<String> unknown(Iterable<ConfigurationPropertySource> sources) {
    ConfigurationPropertyName prefix = ConfigurationPropertyName.of(PREFIX);
    Set<String> known = knownForms();
    Set<String> unknown = new TreeSet<>();
    for (ConfigurationPropertySource source : sources) {
      if (!(source instanceof IterableConfigurationPropertySource iterable)) {
        continue;
      }
      iterable.stream()
          .filter(prefix::isAncestorOf)
          .map(ConfigurationPropertyName::toString)
          .filter(name -> !known.contains(withoutIndexes(name)))
          .forEach(unknown::add);
    }
    return List.copyOf(unknown);
  }

  /** Every sample property's full name, dashed, in the order of the records. */
  static List<String> known() {
    List<String> names = new ArrayList<>();
    collect(PREFIX, SampleProperties.class, names);
    return names;
  }

  /** The known name closest to {@code unknown}, if one is within a few edits. */
  static Optional<String> suggestion(String unknown) {
    TreeMap<Integer, String> byDistance = new TreeMap<>();
    String target = withoutIndexes(unknown);
    for (String name : known()) {
      byDistance.putIfAbsent(edits(target, name), name);
    }
    return Optional.ofNullable(byDistance.firstEntry())
        .filter(closest -> closest.getKey() <= MOST_EDITS_SUGGESTED)
        .map(closest -> closest.getValue());
  }

  private static void collect(String prefix, Class<?> type, Collection<String> names) {
    for (RecordComponent component : type.getRecordComponents()) {
      String name = prefix + "." + dashed(component.getName());
      if (component.getType().isRecord()) {
        collect(name, component.getType(), names);
      } else {
        names.add(name);
      }
    }
  }

  /**
   * Each known name as it may come from a source: dashed, without dashes (as from {@code
   * KVBRIDGE_SAMPLE_ROUTER_DECODEURLS}), and with dashes as dots (as from {@code
   * KVBRIDGE_SAMPLE_ROUTER_DECODE_URLS}).
   */
  private static Set<String> knownForms() {
    Set<String> forms = new TreeSet<>();
    for (String name : known()) {
      forms.add(name);
      forms.add(name.replace("-", ""));
      forms.add(name.replace('-', '.'));
    }
    return forms;
  }

  private static String withoutIndexes(String name) {
    return INDEXES.matcher(name.toLowerCase(Locale.ROOT)).replaceAll("");
  }

  private static String dashed(String camelCase) {
    return camelCase.replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase(Locale.ROOT);
  }

  /** Levenshtein distance: insertions, deletions and substitutions. */
  private static int edits(String a, String b) {
    int[] previous = new int[b.length() + 1];
    int[] current = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      previous[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      current[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int substitution = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
        current[j] = Math.min(substitution, Math.min(previous[j], current[j - 1]) + 1);
      }
      int[] swap = previous;
      previous = current;
      current = swap;
    }
    return previous[b.length()];
  }
}
