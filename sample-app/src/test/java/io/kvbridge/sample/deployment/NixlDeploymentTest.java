package io.kvbridge.sample.deployment;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The multi-process deployment on the NIXL connector, in host memory. Runs when the sample app is
 * built with {@code -Pnixl} and connector-nixl's build has fetched NIXL into {@code
 * connector-nixl/target/nixl/lib}; skipped otherwise.
 */
class NixlDeploymentTest extends MultiProcessDeployment {

  private static final Path REPOSITORY = Path.of("").toAbsolutePath().getParent();

  @Override
  List<String> connectorArguments(Path work) {
    assumeTrue(
        isOnClassPath("io.kvbridge.nixl.NixlConnectorProvider"),
        "the NIXL connector is not on the class path; build the sample app with -Pnixl");
    assumeTrue(
        Files.isDirectory(REPOSITORY.resolve("connector-nixl/target/nixl/lib")),
        "NIXL is not fetched; run ./mvnw -pl connector-nixl generate-resources");
    return List.of("--kvbridge.connector.type=nixl", "--kvbridge.nixl.memory=dram");
  }

  /** NIXL finds its libraries in connector-nixl/target/nixl/lib, seen from the repository root. */
  @Override
  Path nodeDirectory() {
    return REPOSITORY;
  }

  private static boolean isOnClassPath(String className) {
    try {
      Class.forName(className, false, NixlDeploymentTest.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException e) {
      return false;
    }
  }
}
