package io.kvbridge.nixl.capi;

import java.io.IOException;
import java.io.InputStream;
import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import org.bytedeco.javacpp.Loader;

/**
 * Finds and loads NIXL's C API and the JNI glue of {@link NixlCapi}, once per JVM.
 *
 * <p>An engine asks for NIXL at a {@link Location}: an installation ({@code nixl.home}) and
 * optionally a plugin directory ({@code nixl.plugin-dir}). Where it names no installation, the
 * system property {@value #HOME_PROPERTY} is used, then the environment variable {@value
 * #HOME_ENV}, then the directory this connector's build fetched NIXL into and linked its JNI glue
 * against ({@link #builtAgainst()}), if it is still there; where it names no plugin directory, the
 * system property {@value #PLUGIN_DIR_PROPERTY}, then NIXL's own {@code NIXL_PLUGIN_DIR}, then the
 * installation's {@code plugins/}. An installation may be the directory holding {@code
 * libnixl_capi.so}, an install prefix ({@code lib/x86_64-linux-gnu}, {@code lib64}, {@code lib}),
 * or the {@code site-packages} of a pip-installed {@code nixl-cu13}/{@code nixl-cu12} wheel.
 *
 * <p>Loading preloads NIXL's core libraries from that directory by absolute path (their RPATHs find
 * the libraries they bundle), then the JNI glue, and points {@code NIXL_PLUGIN_DIR} at the plugin
 * directory. A process can load NIXL only once, from one directory and with one plugin directory:
 * the outcome of that load, success or the root cause of the failure, is kept (a second attempt
 * would only hide the first error behind {@link NoClassDefFoundError}), every later request for the
 * same location gets it, and a request for another installation or plugin directory gets a {@link
 * Failed} naming both. Outcomes are remembered per requested location.
 *
 * <p>Thread-safe.
 */
public final class NixlLibrary {

  /** System property naming the NIXL installation where an engine names none. */
  public static final String HOME_PROPERTY = "kvbridge.nixl.home";

  /** Environment variable naming the NIXL installation where neither engine nor JVM name one. */
  public static final String HOME_ENV = "KVBRIDGE_NIXL_HOME";

  /** System property naming NIXL's plugin directory where an engine names none. */
  public static final String PLUGIN_DIR_PROPERTY = "kvbridge.nixl.plugin-dir";

  /**
   * The resource, beside this class, in which the build records the NIXL library directory it
   * linked against: {@value #BUILT_AGAINST_KEY}{@code =<absolute directory>}, empty when it built
   * without NIXL.
   */
  static final String BUILT_AGAINST_RESOURCE = "nixl-build.properties";

  /** The key of the library directory in {@value #BUILT_AGAINST_RESOURCE}. */
  static final String BUILT_AGAINST_KEY = "library-dir";

  /** How to get NIXL, appended to every failure. */
  public static final String HOW_TO_INSTALL =
      "run `./mvnw -pl connector-nixl generate-resources` to fetch the pinned NIXL wheel into"
          + " connector-nixl/target/nixl/lib, then point nixl.home (kvbridge.nixl.home with the"
          + " starter), -D"
          + HOME_PROPERTY
          + " or env "
          + HOME_ENV
          + " at it, or at another NIXL install holding libnixl_capi.so";

  private static final System.Logger LOG = System.getLogger(NixlLibrary.class.getName());

  /** Core libraries in dependency order; the last is the C API. Missing ones are skipped. */
  private static final List<String> PRELOAD =
      List.of(
          "libnixl_common.so",
          "libserdes.so",
          "libnixl_build.so",
          "libstream.so",
          "libnixl.so",
          "libnixl_capi.so");

  private static final List<String> LAYOUTS =
      List.of(
          "",
          ".nixl_cu13.mesonpy.libs",
          ".nixl_cu12.mesonpy.libs",
          "lib/x86_64-linux-gnu",
          "lib64",
          "lib");

  /** Outcomes by requested location, after the JVM's defaults were filled in. */
  private static final Map<Location, Outcome> outcomes = new HashMap<>();

  /** The one load this process attempted: from where, and how it went. */
  private static Attempt attempt;

  private NixlLibrary() {}

  /**
   * Where an engine asks NIXL to be loaded from.
   *
   * @param home the installation; the JVM's default when empty
   * @param pluginDir the plugin directory; the JVM's or NIXL's default when empty
   */
  public record Location(Optional<Path> home, Optional<Path> pluginDir) {

    /** No installation or plugin directory named: the JVM's defaults. */
    public static final Location DEFAULT = new Location(Optional.empty(), Optional.empty());

    /** Checks the parts are present or empty, never null. */
    public Location {
      Objects.requireNonNull(home, "home");
      Objects.requireNonNull(pluginDir, "pluginDir");
    }
  }

  /** The result of loading NIXL. */
  public sealed interface Outcome {}

  /**
   * NIXL is loaded.
   *
   * @param libraryDir the directory {@code libnixl_capi.so} was loaded from
   * @param pluginDir where NIXL looks for backend plugins
   */
  public record Loaded(Path libraryDir, Path pluginDir) implements Outcome {}

  /**
   * NIXL could not be loaded, or not from where it was asked for.
   *
   * @param reason what failed, and how to get NIXL
   * @param cause the root failure, e.g. an {@link UnsatisfiedLinkError}
   */
  public record Failed(String reason, Optional<Throwable> cause) implements Outcome {}

  private record Attempt(Path libraryDir, Outcome outcome) {}

  /**
   * NIXL as loaded from {@code requested}: loads it on the first request, and answers every later
   * one from that first load, or with a {@link Failed} when it asks for another installation or
   * plugin directory than the loaded ones.
   */
  public static synchronized Outcome probe(Location requested) {
    Location location =
        withDefaults(
            requested, System.getProperty(HOME_PROPERTY), System.getenv(HOME_ENV), builtAgainst());
    if (location.home().isEmpty()) {
      return attempt != null
          ? withPluginDirOf(location, attempt.outcome())
          : new Failed(noneNamed(builtAgainst()), Optional.empty());
    }
    Outcome outcome = outcomes.get(location);
    if (outcome == null) {
      outcome = probeOnce(location);
      outcomes.put(location, outcome);
      if (outcome instanceof Loaded loaded) {
        LOG.log(
            Level.INFO,
            "NIXL C API loaded from {0} (plugins in {1})",
            loaded.libraryDir(),
            loaded.pluginDir());
      } else {
        LOG.log(Level.INFO, "NIXL is not available: {0}", ((Failed) outcome).reason());
      }
    }
    return outcome;
  }

  /**
   * NIXL as this process loaded it, or, where it has not tried yet, as loaded now from the JVM's
   * defaults. For code that needs NIXL loaded but has no location of its own to ask for.
   */
  public static synchronized Outcome probe() {
    return attempt != null ? attempt.outcome() : probe(Location.DEFAULT);
  }

  /**
   * NIXL as loaded from {@code requested}; see {@link #probe(Location)}.
   *
   * @throws NixlUnavailableException with the reason and root cause if it is not
   */
  public static Loaded require(Location requested) {
    return loadedOrThrow(probe(requested));
  }

  /**
   * NIXL as this process loaded it, or as loaded now from the JVM's defaults; see {@link #probe()}.
   *
   * @throws NixlUnavailableException with the reason and root cause if it is not loaded
   */
  public static Loaded require() {
    return loadedOrThrow(probe());
  }

  private static Loaded loadedOrThrow(Outcome result) {
    if (result instanceof Failed failed) {
      throw new NixlUnavailableException(failed.reason(), failed.cause().orElse(null));
    }
    return (Loaded) result;
  }

  /**
   * The NIXL library directory this connector's build fetched NIXL into (or was pointed at) and
   * linked its JNI glue against, as the build recorded it; empty when it built without NIXL. The
   * directory may be gone since (a clean build, a jar copied to another machine).
   */
  public static Optional<Path> builtAgainst() {
    try (InputStream in = NixlLibrary.class.getResourceAsStream(BUILT_AGAINST_RESOURCE)) {
      if (in == null) {
        return Optional.empty();
      }
      Properties recorded = new Properties();
      recorded.load(in);
      return named(recorded.getProperty(BUILT_AGAINST_KEY))
          // An unfiltered resource: the build did not say.
          .filter(dir -> !dir.toString().startsWith("${"));
    } catch (IOException e) {
      LOG.log(Level.WARNING, "cannot read " + BUILT_AGAINST_RESOURCE, e);
      return Optional.empty();
    }
  }

  /** Why no installation is used when none is named, for the build's directory {@code built}. */
  static String noneNamed(Optional<Path> built) {
    return "no NIXL installation is named (nixl.home, -D"
        + HOME_PROPERTY
        + " and env "
        + HOME_ENV
        + " are all unset)"
        + built
            .map(dir -> " and the one this build fetched NIXL into, " + dir + ", is not there")
            .orElse(" and this build has none of its own (it was built without NIXL)")
        + "; "
        + HOW_TO_INSTALL;
  }

  /**
   * {@code requested} with the JVM's installation and plugin directory where it names none: the
   * installation from {@code homeProperty} (the system property; null when unset), else {@code
   * homeEnv} (the environment variable; null when unset), else {@code built}, the build's own, if
   * it is a directory.
   */
  static Location withDefaults(
      Location requested, String homeProperty, String homeEnv, Optional<Path> built) {
    Optional<Path> home =
        requested
            .home()
            .or(() -> named(homeProperty))
            .or(() -> named(homeEnv))
            .or(() -> built.filter(Files::isDirectory));
    Optional<Path> plugins =
        requested.pluginDir().or(() -> named(System.getProperty(PLUGIN_DIR_PROPERTY)));
    return new Location(home.map(NixlLibrary::absolute), plugins.map(NixlLibrary::absolute));
  }

  private static Optional<Path> named(String value) {
    return value == null || value.isBlank() ? Optional.empty() : Optional.of(Path.of(value));
  }

  private static Path absolute(Path path) {
    return path.toAbsolutePath().normalize();
  }

  private static Outcome probeOnce(Location location) {
    Path home = location.home().orElseThrow();
    Path dir;
    try {
      dir = locate(home);
    } catch (NixlUnavailableException e) {
      return new Failed(e.getMessage(), Optional.empty());
    }
    if (attempt == null) {
      attempt = new Attempt(dir, load(dir, location.pluginDir()));
      return attempt.outcome();
    }
    if (!attempt.libraryDir().equals(dir)) {
      return new Failed(
          "NIXL is loaded once per process, and this process "
              + (attempt.outcome() instanceof Loaded
                  ? "loaded it from "
                  : "failed to load it from ")
              + attempt.libraryDir()
              + "; the installation "
              + home
              + " holds another one ("
              + dir
              + "): give every engine of this process the same nixl.home",
          Optional.empty());
    }
    return withPluginDirOf(location, attempt.outcome());
  }

  /** {@code outcome}, unless {@code location} asks for another plugin directory than it uses. */
  private static Outcome withPluginDirOf(Location location, Outcome outcome) {
    if (outcome instanceof Loaded loaded
        && location.pluginDir().isPresent()
        && !location.pluginDir().get().equals(loaded.pluginDir())) {
      return new Failed(
          "NIXL's plugin directory is set once per process, and this process uses "
              + loaded.pluginDir()
              + "; "
              + location.pluginDir().get()
              + " is another one: give every engine of this process the same nixl.plugin-dir",
          Optional.empty());
    }
    return outcome;
  }

  /** Loads NIXL from {@code dir}; the process's one attempt. */
  private static Outcome load(Path dir, Optional<Path> requestedPlugins) {
    Path current = dir.resolve("libnixl_capi.so");
    try {
      for (String name : PRELOAD) {
        current = dir.resolve(name);
        if (Files.isRegularFile(current)) {
          System.load(current.toString());
        }
      }
      current = null;
      Loader.load(NixlCapi.class);
    } catch (UnsatisfiedLinkError | NoClassDefFoundError | SecurityException e) {
      String what =
          current == null
              ? "the JNI glue of " + NixlCapi.class.getName() + " (was the native build skipped?)"
              : current.toString();
      return new Failed(
          "cannot load " + what + ": " + rootMessage(e) + "; " + HOW_TO_INSTALL, Optional.of(e));
    }
    if (NixlCapi.nixl_capi_is_stub()) {
      return new Failed(
          dir + "/libnixl_capi.so is NIXL's stub build, which moves nothing; " + HOW_TO_INSTALL,
          Optional.empty());
    }
    Path plugins = dir.resolve("plugins");
    String inherited = System.getenv("NIXL_PLUGIN_DIR");
    if (requestedPlugins.isPresent()) {
      plugins = requestedPlugins.get();
      NixlCapi.setenv("NIXL_PLUGIN_DIR", plugins.toString(), 1);
    } else if (inherited != null && !inherited.isBlank()) {
      plugins = absolute(Path.of(inherited));
    } else if (Files.isDirectory(plugins)) {
      NixlCapi.setenv("NIXL_PLUGIN_DIR", plugins.toString(), 0);
    }
    return new Loaded(dir, plugins);
  }

  /** The directory holding libnixl_capi.so in the installation {@code home}. */
  private static Path locate(Path home) {
    List<Path> looked = new ArrayList<>();
    for (String layout : LAYOUTS) {
      Path candidate = layout.isEmpty() ? home : home.resolve(layout);
      looked.add(candidate);
      if (Files.isRegularFile(candidate.resolve("libnixl_capi.so"))) {
        return absolute(candidate);
      }
    }
    throw new NixlUnavailableException(
        "no libnixl_capi.so in the NIXL installation "
            + home
            + " (looked in "
            + looked
            + "); "
            + HOW_TO_INSTALL,
        null);
  }

  private static String rootMessage(Throwable e) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    return root.getClass().getSimpleName() + ": " + root.getMessage();
  }
}
