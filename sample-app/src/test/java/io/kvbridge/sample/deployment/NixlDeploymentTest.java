package io.kvbridge.sample.deployment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The multi-process deployment on the NIXL connector, in host memory, with the NIXL that
 * connector-nixl's build fetched into {@code connector-nixl/target/nixl/lib}, named to each node by
 * {@code kvbridge.nixl.home}. Fails when NIXL is missing, unless the build was told NIXL is
 * optional ({@code -Dkvbridge.nixl.required=false}, handed to the tests as {@code
 * kvbridge.test.nixl-required}), which skips it with the reason.
 */
class NixlDeploymentTest extends MultiProcessDeployment {

  private static final Path REPOSITORY = Path.of("").toAbsolutePath().getParent();

  @Override
  List<String> connectorArguments(Path work) {
    return nixlArguments();
  }

  /** NIXL in host memory, from the fetched library; fails or skips when it is missing. */
  static List<String> nixlArguments() {
    Path lib = REPOSITORY.resolve("connector-nixl/target/nixl/lib");
    String missing =
        "NIXL is not fetched into " + lib + "; run ./mvnw -pl connector-nixl generate-resources";
    if (Boolean.parseBoolean(System.getProperty("kvbridge.test.nixl-required", "true"))) {
      assertThat(lib).as(missing).isDirectory();
    } else {
      assumeTrue(Files.isDirectory(lib), missing);
    }
    return List.of(
        "--kvbridge.connector.type=nixl",
        "--kvbridge.nixl.memory=dram",
        "--kvbridge.nixl.home=" + lib);
  }
}
