package io.kvbridge.nixl.capi;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Where NIXL is loaded from when an engine names no installation: the JVM's system property, else
 * its environment variable, else the directory the build fetched NIXL into, if it is still there;
 * with none, the failure says what to set.
 */
class NixlLibraryDefaultsTest {

  @TempDir Path temp;

  @Test
  void theBuildRecordsTheDirectoryItLinkedNixlAgainst() {
    // The build hands the tests the same directory as -Dkvbridge.nixl.home; empty without NIXL.
    String linked = System.getProperty(NixlLibrary.HOME_PROPERTY, "");

    assertThat(NixlLibrary.builtAgainst().map(Path::toString).orElse("")).isEqualTo(linked);
  }

  @Test
  void withNothingNamedTheBuildsDirectoryIsUsed() throws Exception {
    Path built = Files.createDirectory(temp.resolve("built"));

    NixlLibrary.Location location =
        NixlLibrary.withDefaults(NixlLibrary.Location.DEFAULT, null, null, Optional.of(built));

    assertThat(location.home()).contains(built);
  }

  @Test
  void theEnvironmentVariableComesBeforeTheBuildsDirectory() throws Exception {
    Path built = Files.createDirectory(temp.resolve("built"));
    Path env = temp.resolve("from-env");

    NixlLibrary.Location location =
        NixlLibrary.withDefaults(
            NixlLibrary.Location.DEFAULT, " ", env.toString(), Optional.of(built));

    assertThat(location.home()).contains(env);
  }

  @Test
  void theSystemPropertyComesBeforeTheEnvironmentVariable() {
    Path property = temp.resolve("from-property");

    NixlLibrary.Location location =
        NixlLibrary.withDefaults(
            NixlLibrary.Location.DEFAULT,
            property.toString(),
            temp.resolve("from-env").toString(),
            Optional.empty());

    assertThat(location.home()).contains(property);
  }

  @Test
  void theEnginesOwnInstallationComesFirst() throws Exception {
    Path own = temp.resolve("own");
    Path built = Files.createDirectory(temp.resolve("built"));

    NixlLibrary.Location location =
        NixlLibrary.withDefaults(
            new NixlLibrary.Location(Optional.of(own), Optional.empty()),
            temp.resolve("from-property").toString(),
            null,
            Optional.of(built));

    assertThat(location.home()).contains(own);
  }

  @Test
  void aBuildDirectoryThatIsGoneIsNotUsed() {
    Path gone = temp.resolve("cleaned");

    NixlLibrary.Location location =
        NixlLibrary.withDefaults(NixlLibrary.Location.DEFAULT, null, null, Optional.of(gone));

    assertThat(location.home()).isEmpty();
  }

  @Test
  void withoutAnyInstallationTheReasonNamesWhatToSetAndTheMissingBuildDirectory() {
    Path gone = temp.resolve("cleaned");

    assertThat(NixlLibrary.noneNamed(Optional.of(gone)))
        .startsWith(
            "no NIXL installation is named (nixl.home, -Dkvbridge.nixl.home and env"
                + " KVBRIDGE_NIXL_HOME are all unset) and the one this build fetched NIXL into, "
                + gone
                + ", is not there")
        .contains("kvbridge.nixl.home with the starter");
    assertThat(NixlLibrary.noneNamed(Optional.empty()))
        .contains("this build has none of its own (it was built without NIXL)");
  }
}
