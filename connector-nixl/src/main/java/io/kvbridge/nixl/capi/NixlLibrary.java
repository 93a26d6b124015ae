package io.kvbridge.nixl.capi;

import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.bytedeco.javacpp.Loader;

/**
 * Finds and loads NIXL's C API and the JNI glue of {@link NixlCapi}, once per JVM.
 *
 * <p>The library directory is, in order: the system property {@value #HOME_PROPERTY}, the
 * environment variable {@value #HOME_ENV}, then the build's own {@code target/nixl/lib} (of this
 * module, seen from the working directory). It may be the directory holding {@code
 * libnixl_capi.so}, an install prefix ({@code lib/x86_64-linux-gnu}, {@code lib64}, {@code lib}),
 * or the {@code site-packages} of a pip-installed {@code nixl-cu13}/{@code nixl-cu12} wheel.
 *
 * <p>Loading preloads NIXL's core libraries from that directory by absolute path (their RPATHs find
 * the libraries they bundle), then the JNI glue, and points {@code NIXL_PLUGIN_DIR} at the
 * directory's {@code plugins/} unless it is already set. The outcome, success or the root cause of
 * the failure, is probed once and kept: a second attempt would only hide the first error behind
 * {@link NoClassDefFoundError}.
 *
 * <p>Thread-safe.
 */
public final class NixlLibrary {

  /** System property naming the NIXL library directory or install. */
  public static final String HOME_PROPERTY = "kvbridge.nixl.home";

  /** Environment variable naming the NIXL library directory or install. */
  public static final String HOME_ENV = "KVBRIDGE_NIXL_HOME";

  /** System property naming NIXL's plugin directory; wins over {@code NIXL_PLUGIN_DIR}. */
  public static final String PLUGIN_DIR_PROPERTY = "kvbridge.nixl.plugin-dir";

  /** How to get NIXL, appended to every failure. */
  public static final String HOW_TO_INSTALL =
      "run `./mvnw -pl connector-nixl generate-resources` to fetch the pinned NIXL wheel into"
          + " connector-nixl/target/nixl/lib, or point -D"
          + HOME_PROPERTY
          + " (env "
          + HOME_ENV
          + ") at a NIXL install holding libnixl_capi.so";

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

  private static Outcome outcome;

  private NixlLibrary() {}

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
   * NIXL could not be loaded.
   *
   * @param reason what failed, and how to get NIXL
   * @param cause the root failure, e.g. an {@link UnsatisfiedLinkError}
   */
  public record Failed(String reason, Optional<Throwable> cause) implements Outcome {}

  /** Loads NIXL on the first call and returns the outcome of that first attempt ever after. */
  public static synchronized Outcome probe() {
    if (outcome == null) {
      outcome = load();
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
   * Loads NIXL if needed and returns where from.
   *
   * @throws NixlUnavailableException with the reason and root cause if it cannot be loaded
   */
  public static Loaded require() {
    Outcome result = probe();
    if (result instanceof Failed failed) {
      throw new NixlUnavailableException(failed.reason(), failed.cause().orElse(null));
    }
    return (Loaded) result;
  }

  private static Outcome load() {
    Path dir;
    try {
      dir = locate();
    } catch (NixlUnavailableException e) {
      return new Failed(e.getMessage(), Optional.empty());
    }
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
    String property = System.getProperty(PLUGIN_DIR_PROPERTY);
    String configured = System.getenv("NIXL_PLUGIN_DIR");
    if (property != null && !property.isBlank()) {
      plugins = Path.of(property);
      NixlCapi.setenv("NIXL_PLUGIN_DIR", plugins.toString(), 1);
    } else if (configured != null && !configured.isBlank()) {
      plugins = Path.of(configured);
    } else if (Files.isDirectory(plugins)) {
      NixlCapi.setenv("NIXL_PLUGIN_DIR", plugins.toString(), 0);
    }
    return new Loaded(dir, plugins);
  }

  /** The directory holding libnixl_capi.so, from the configured home or the build's default. */
  private static Path locate() {
    String home = System.getProperty(HOME_PROPERTY);
    String source = "-D" + HOME_PROPERTY;
    if (home == null || home.isBlank()) {
      home = System.getenv(HOME_ENV);
      source = "env " + HOME_ENV;
    }
    List<Path> roots = new ArrayList<>();
    if (home != null && !home.isBlank()) {
      roots.add(Path.of(home));
    } else {
      Path cwd = Path.of("").toAbsolutePath();
      roots.add(cwd.resolve("target/nixl/lib"));
      roots.add(cwd.resolve("connector-nixl/target/nixl/lib"));
      source = "the default (no -D" + HOME_PROPERTY + ", no env " + HOME_ENV + ")";
    }
    List<Path> looked = new ArrayList<>();
    for (Path root : roots) {
      for (String layout : LAYOUTS) {
        Path candidate = layout.isEmpty() ? root : root.resolve(layout);
        looked.add(candidate);
        if (Files.isRegularFile(candidate.resolve("libnixl_capi.so"))) {
          return candidate.toAbsolutePath().normalize();
        }
      }
    }
    throw new NixlUnavailableException(
        "no libnixl_capi.so found from "
            + source
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
