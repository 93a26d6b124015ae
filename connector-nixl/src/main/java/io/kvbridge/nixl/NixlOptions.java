package io.kvbridge.nixl;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * How a {@link NixlTransport} sets up its agent, read from the connector properties:
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
 *   <li>{@value #HOME} and {@value #PLUGIN_DIR}: where NIXL's libraries and plugins are. These are
 *       process-wide: NIXL is loaded once, when the provider is first probed, from the system
 *       properties {@value io.kvbridge.nixl.capi.NixlLibrary#HOME_PROPERTY} and {@value
 *       io.kvbridge.nixl.capi.NixlLibrary#PLUGIN_DIR_PROPERTY} (the starter sets them from {@code
 *       kvbridge.nixl.home} and {@code kvbridge.nixl.plugin-dir} before it probes). Accepted here
 *       so one configuration carries them.
 * </ul>
 *
 * @param memory which memory {@code allocate} returns
 * @param cudaDevice the GPU for device memory
 * @param progressDelayMicros the progress thread's sleep between polls
 * @param backends the backend plugins to create, in order
 * @param backendParameters per plugin, the parameters that override its defaults
 * @param telemetry whether transfers capture telemetry
 */
public record NixlOptions(
    MemoryMode memory,
    int cudaDevice,
    long progressDelayMicros,
    List<String> backends,
    Map<String, Map<String, String>> backendParameters,
    boolean telemetry) {

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

  /** Property: the NIXL installation (applied process-wide before the first probe). */
  public static final String HOME = "nixl.home";

  /** Property: NIXL's plugin directory (applied process-wide before the first probe). */
  public static final String PLUGIN_DIR = "nixl.plugin-dir";

  /** The default progress-thread delay: idle agents cost well under 5% of a core. */
  public static final long DEFAULT_PROGRESS_DELAY_US = 200;

  /** The smallest accepted delay. */
  public static final long MIN_PROGRESS_DELAY_US = 1;

  /** The largest accepted delay (10 ms). */
  public static final long MAX_PROGRESS_DELAY_US = 10_000;

  private static final List<String> KEYS =
      List.of(MEMORY, CUDA_DEVICE, PROGRESS_DELAY_US, BACKENDS, TELEMETRY, HOME, PLUGIN_DIR);

  /** Checks and copies the values. */
  public NixlOptions {
    if (cudaDevice < 0) {
      throw new IllegalArgumentException(CUDA_DEVICE + " must be at least 0, got " + cudaDevice);
    }
    if (progressDelayMicros < MIN_PROGRESS_DELAY_US
        || progressDelayMicros > MAX_PROGRESS_DELAY_US) {
      throw new IllegalArgumentException(
          PROGRESS_DELAY_US
              + " must be between "
              + MIN_PROGRESS_DELAY_US
              + " and "
              + MAX_PROGRESS_DELAY_US
              + " microseconds, got "
              + progressDelayMicros);
    }
    backends = List.copyOf(backends);
    if (backends.isEmpty()) {
      throw new IllegalArgumentException(BACKENDS + " must name at least one backend plugin");
    }
    Map<String, Map<String, String>> copy = new TreeMap<>();
    backendParameters.forEach((plugin, params) -> copy.put(plugin, Map.copyOf(params)));
    for (String plugin : copy.keySet()) {
      if (!backends.contains(plugin)) {
        throw new IllegalArgumentException(
            BACKEND_PREFIX
                + plugin
                + ".* sets parameters of a backend that "
                + BACKENDS
                + "="
                + String.join(",", backends)
                + " does not create");
      }
    }
    backendParameters = Collections.unmodifiableMap(copy);
  }

  /** The defaults: automatic memory, GPU 0, the default delay, UCX, no telemetry. */
  public static NixlOptions defaults() {
    return new NixlOptions(
        MemoryMode.AUTO, 0, DEFAULT_PROGRESS_DELAY_US, List.of("UCX"), Map.of(), false);
  }

  /** A copy with another memory mode. */
  public NixlOptions withMemory(MemoryMode mode) {
    return new NixlOptions(
        mode, cudaDevice, progressDelayMicros, backends, backendParameters, telemetry);
  }

  /**
   * Reads the {@code nixl.*} connector properties; other keys are ignored.
   *
   * @throws IllegalArgumentException naming the property, its value and what is accepted; also for
   *     an unknown {@code nixl.*} key
   */
  public static NixlOptions fromProperties(Map<String, String> properties) {
    NixlOptions d = defaults();
    MemoryMode memory = d.memory();
    int device = d.cudaDevice();
    long delay = d.progressDelayMicros();
    List<String> backends = d.backends();
    Map<String, Map<String, String>> parameters = new LinkedHashMap<>();
    boolean telemetry = d.telemetry();
    for (Map.Entry<String, String> e : new TreeMap<>(properties).entrySet()) {
      String key = e.getKey();
      String value = e.getValue();
      if (!key.startsWith("nixl.")) {
        continue;
      }
      switch (key) {
        case MEMORY -> memory = MemoryMode.parse(key, value);
        case CUDA_DEVICE -> device = (int) parseLong(key, value, 0, Integer.MAX_VALUE);
        case PROGRESS_DELAY_US ->
            delay = parseLong(key, value, MIN_PROGRESS_DELAY_US, MAX_PROGRESS_DELAY_US);
        case BACKENDS -> backends = parseList(key, value);
        case TELEMETRY -> telemetry = parseBoolean(key, value);
        case HOME, PLUGIN_DIR -> {
          // Read by NixlLibrary from system properties when NIXL is loaded; see the class javadoc.
        }
        default -> {
          if (!key.startsWith(BACKEND_PREFIX)) {
            throw new IllegalArgumentException(
                "unknown property '"
                    + key
                    + "' for the nixl connector; known: "
                    + KEYS
                    + " and "
                    + BACKEND_PREFIX
                    + "<PLUGIN>.<parameter>");
          }
          String rest = key.substring(BACKEND_PREFIX.length());
          int dot = rest.indexOf('.');
          if (dot <= 0 || dot == rest.length() - 1) {
            throw new IllegalArgumentException(
                "property '" + key + "' must have the form " + BACKEND_PREFIX + "<PLUGIN>.<name>");
          }
          parameters
              .computeIfAbsent(rest.substring(0, dot), p -> new LinkedHashMap<>())
              .put(rest.substring(dot + 1), value);
        }
      }
    }
    return new NixlOptions(memory, device, delay, backends, parameters, telemetry);
  }

  private static long parseLong(String key, String value, long min, long max) {
    long parsed;
    try {
      parsed = Long.parseLong(value.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          key + "='" + value + "' is not a whole number between " + min + " and " + max, e);
    }
    if (parsed < min || parsed > max) {
      throw new IllegalArgumentException(key + "=" + parsed + " is outside " + min + ".." + max);
    }
    return parsed;
  }

  private static boolean parseBoolean(String key, String value) {
    String v = value.trim();
    if (v.equalsIgnoreCase("true") || v.equalsIgnoreCase("false")) {
      return Boolean.parseBoolean(v);
    }
    throw new IllegalArgumentException(key + "='" + value + "' is not true or false");
  }

  private static List<String> parseList(String key, String value) {
    List<String> out = new ArrayList<>();
    for (String part : value.split(",")) {
      String name = part.trim();
      if (name.isEmpty()) {
        throw new IllegalArgumentException(
            key + "='" + value + "' must be comma-separated plugin names, e.g. UCX");
      }
      out.add(name);
    }
    return out;
  }
}
