package io.kvbridge.nixl.capi;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.nixl.testing.RequiresNixl;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

@ExtendWith(RequiresNixl.class)
class NixlLibraryTest {

  private final NixlLibrary.Loaded loaded = NixlLibrary.require();

  @Test
  void theLoadedInstallationAskedForAgainGetsTheLoadedNixl() {
    NixlLibrary.Location same =
        new NixlLibrary.Location(Optional.of(loaded.libraryDir()), Optional.empty());

    assertThat(NixlLibrary.probe(same)).isEqualTo(loaded);
  }

  @Test
  void theLoadedPluginDirectoryAskedForAgainGetsTheLoadedNixl() {
    NixlLibrary.Location same =
        new NixlLibrary.Location(Optional.of(loaded.libraryDir()), Optional.of(loaded.pluginDir()));

    assertThat(NixlLibrary.probe(same)).isEqualTo(loaded);
  }

  @Test
  void anInstallationWithoutNixlIsUnavailableNamingWhereItLooked(@TempDir Path empty) {
    NixlLibrary.Outcome outcome =
        NixlLibrary.probe(new NixlLibrary.Location(Optional.of(empty), Optional.empty()));

    assertThat(outcome)
        .isInstanceOfSatisfying(
            NixlLibrary.Failed.class,
            failed ->
                assertThat(failed.reason())
                    .contains("no libnixl_capi.so in the NIXL installation " + empty)
                    .contains(empty.resolve("lib64").toString()));
  }

  @Test
  void anotherPluginDirectoryThanTheLoadedOneIsUnavailableNamingBoth(@TempDir Path plugins) {
    NixlLibrary.Outcome outcome =
        NixlLibrary.probe(
            new NixlLibrary.Location(Optional.of(loaded.libraryDir()), Optional.of(plugins)));

    assertThat(outcome)
        .isInstanceOfSatisfying(
            NixlLibrary.Failed.class,
            failed ->
                assertThat(failed.reason())
                    .contains("this process uses " + loaded.pluginDir())
                    .contains(plugins + " is another one"));
  }

  @Test
  void theOutcomeOfALocationIsRemembered(@TempDir Path empty) {
    NixlLibrary.Location location = new NixlLibrary.Location(Optional.of(empty), Optional.empty());

    assertThat(NixlLibrary.probe(location)).isSameAs(NixlLibrary.probe(location));
  }
}
