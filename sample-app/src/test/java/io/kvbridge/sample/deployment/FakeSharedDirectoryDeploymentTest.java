package io.kvbridge.sample.deployment;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** The multi-process deployment on the fake connector's shared-directory mode (the default). */
class FakeSharedDirectoryDeploymentTest extends MultiProcessDeployment {

  @Override
  List<String> connectorArguments(Path work) throws IOException {
    return sharedDirectoryArguments(work);
  }

  /** The fake connector over a directory {@code fabric} under {@code work}. */
  static List<String> sharedDirectoryArguments(Path work) throws IOException {
    Path sharedDir = Files.createDirectories(work.resolve("fabric"));
    return List.of("--kvbridge.fake.shared-dir=" + sharedDir);
  }
}
