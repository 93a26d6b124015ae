package io.kvbridge.nixl;

import io.kvbridge.nixl.capi.NixlLibrary;
import io.kvbridge.spi.ConnectorProperties;
import io.kvbridge.spi.InvalidSettingException;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * How a {@link NixlBackend} sets up its agent, read from the connector properties:
 *
 * <ul>
 *   <li>{@value #MEMORY}: {@code auto} (default), {@code vram} or {@code dram};
 *   <li>{@value #CUDA_DEVICE}: the GPU that device memory lives on (default 0);
 *   <li>{@value #PROGRESS_DELAY_US}: microseconds NIXL's progress thread sleeps between polls,
 *       {@value #MIN_PROGRESS_DELAY_US}..{@value #MAX_PROGRESS_DELAY_US} (default {@value
 *       #DEFAULT_PROGRESS_DELAY_US}); lower reacts faster, 0 would spin a core per agent;
 *   <li>{@value #BACKENDS}: comma-separated NIXL backend plugins (default {@code UCX});
 *   <li>{@code nixl.backend.<PLUGIN>.<parameter>}: a backend parameter overriding the plugin's
 *       default, e.g. {@code nixl.backend.UCX.ucx_error_handling_mode=none};
 *   <li>{@value #TELEMETRY}: {@code true} to capture NIXL's per-transfer telemetry (default false);
 *   <li>{@value #HOME}: the NIXL installation to load, when the JVM does not name one with {@code
 *       -Dkvbridge.nixl.home} or {@code KVBRIDGE_NIXL_HOME} (see {@link NixlLibrary});
 *   <li>{@value #PLUGIN_DIR}: NIXL's plugin directory, when the JVM does not name one with {@code
 *       -Dkvbridge.nixl.plugin-dir} (default: NIXL's own, {@code plugins/} beside its libraries).
 * </ul>
 *
 * <p>NIXL is loaded once per process: every engine of a process must ask for the same installation
 * and plugin directory, or leave them unset.
 *
 * @param memory which memory {@code allocate} returns
 * @param cudaDevice the GPU for device memory
 * @param progressDelayMicros the progress thread's sleep between polls
 * @param backends the backend plugins to create, in order
 * @param backendParameters per plugin, the parameters that override its defaults
 * @param telemetry whether transfers capture telemetry
 * @param home the NIXL installation to load; the JVM's default when empty
 * @param pluginDir NIXL's plugin directory; the JVM's or NIXL's default when empty
 */
public record NixlOptions(
    MemoryMode memory,
    int cudaDevice,
    long progressDelayMicros,
    List<String> backends,
    Map<String, Map<String, String>> backendParameters,
    boolean telemetry,
    Optional<Path> home,
    Optional<Path> pluginDir) {

  /** Property: {@code auto}, {@code vram} or {@code dram}. */
  public static final String MEMORY = "nixl.memory";

  /** Property: the CUDA device id. */
  public static final String CUDA_DEVICE = "nixl.cuda-device";

  /** Property: the progress thread's delay in microseconds. */
  public static final String PROGRESS_DELAY_US = "nixl.progress-delay-us";

  /** Property: the backend plugins. */
  public static final String BACKENDS = "nixl.backends";

  /** Property prefix of backend parameters: {@code nixl.backend.<PLUGIN>.<parameter>}. */
  public static final String BACKEND_PREFIX = "nixl.backend.";

  /** Property: whether to capture telemetry. */
  public static final String TELEMETRY = "nixl.telemetry";

  /** Property: the NIXL installation to load. */
  public static final String HOME = "nixl.home";

  /** Property: NIXL's plugin directory. */
  public static final String PLUGIN_DIR = "nixl.plugin-dir";

  /** The default progress-thread delay: idle agents cost well under 5% of a core. */
  public static final long DEFAULT_PROGRESS_DELAY_US = 200;

  /** The smallest accepted delay. */
  public static final long MIN_PROGRESS_DELAY_US = 1;

  /** The largest accepted delay (10 ms). */
  public static final long MAX_PROGRESS_DELAY_US = 10_000;

  private static final List<String> KEYS =
      List.of(MEMORY, CUDA_DEVICE, PROGRESS_DELAY_US, BACKENDS, TELEMETRY, HOME, PLUGIN_DIR);

  /**
   * Checks and copies the values.
   *
   * @throws InvalidSettingException naming the property a value belongs to
   */
  public NixlOptions {
    Objects.requireNonNull(memory, "memory");
    Objects.requireNonNull(home, "home");
    Objects.requireNonNull(pluginDir, "pluginDir");
    if (cudaDevice < 0) {
      throw new InvalidSettingException(CUDA_DEVICE, "(" + cudaDevice + ") must be at least 0");
    }
    if (progressDelayMicros < MIN_PROGRESS_DELAY_US
        || progressDelayMicros > MAX_PROGRESS_DELAY_US) {
      throw new InvalidSettingException(
          PROGRESS_DELAY_US,
          "("
              + progressDelayMicros
              + ") must be between "
              + MIN_PROGRESS_DELAY_US
              + " and "
              + MAX_PROGRESS_DELAY_US
              + " microseconds");
    }
    backends = List.copyOf(backends);
    if (backends.isEmpty()) {
      throw new InvalidSettingException(
          BACKENDS, "must name at least one backend plugin, e.g. UCX");
    }
    Map<String, Map<String, String>> copy = new TreeMap<>();
    backendParameters.forEach((plugin, params) -> copy.put(plugin, Map.copyOf(params)));
    for (Map.Entry<String, Map<String, String>> plugin : copy.entrySet()) {
      if (!backends.contains(plugin.getKey())) {
        String first =
            plugin.getValue().isEmpty() ? "" : "." + new TreeMap<>(plugin.getValue()).firstKey();
        throw new InvalidSettingException(
            BACKEND_PREFIX + plugin.getKey() + first,
            "sets a parameter of backend "
                + plugin.getKey()
                + ", which "
                + BACKENDS
                + "="
                + String.join(",", backends)
                + " does not create");
      }
    }
    backendParameters = Collections.unmodifiableMap(copy);
  }

  /**
   * The defaults: automatic memory, GPU 0, the default delay, UCX, no telemetry, NIXL where the JVM
   * says.
   */
  public static NixlOptions defaults() {
    return new NixlOptions(
        MemoryMode.AUTO,
        0,
        DEFAULT_PROGRESS_DELAY_US,
        List.of("UCX"),
        Map.of(),
        false,
        Optional.empty(),
        Optional.empty());
  }

  /** A copy with another memory mode. */
  public NixlOptions withMemory(MemoryMode mode) {
    return new NixlOptions(
        mode,
        cudaDevice,
        progressDelayMicros,
        backends,
        backendParameters,
        telemetry,
        home,
        pluginDir);
  }

  /** Where these options ask NIXL to be loaded from. */
  public NixlLibrary.Location library() {
    return new NixlLibrary.Location(home, pluginDir);
  }

  /**
   * Reads the {@code nixl.*} connector properties; other connectors' properties are ignored.
   *
   * @throws InvalidSettingException naming the property, its value and what is accepted; also for
   *     an unknown {@code nixl.*} property
   */
  public static NixlOptions fromProperties(ConnectorProperties properties) {
    properties.requireOnlyKnown("nixl.", KEYS, BACKEND_PREFIX);
    NixlOptions d = defaults();
    Map<String, Map<String, String>> parameters = new TreeMap<>();
    properties
        .under(BACKEND_PREFIX)
        .forEach(
            (rest, value) -> {
              int dot = rest.indexOf('.');
              if (dot <= 0 || dot == rest.length() - 1) {
                throw new InvalidSettingException(
                    BACKEND_PREFIX + rest,
                    "must have the form " + BACKEND_PREFIX + "<PLUGIN>.<name>");
              }
              parameters
                  .computeIfAbsent(rest.substring(0, dot), p -> new TreeMap<>())
                  .put(rest.substring(dot + 1), value);
            });
    return new NixlOptions(
        properties.choice(MEMORY, MemoryMode.class, d.memory()),
        (int) properties.integer(CUDA_DEVICE, d.cudaDevice(), 0, Integer.MAX_VALUE),
        properties.integer(
            PROGRESS_DELAY_US,
            d.progressDelayMicros(),
            MIN_PROGRESS_DELAY_US,
            MAX_PROGRESS_DELAY_US),
        properties.list(BACKENDS, d.backends()),
        parameters,
        properties.bool(TELEMETRY, d.telemetry()),
        properties.path(HOME),
        properties.path(PLUGIN_DIR));
  }
}
