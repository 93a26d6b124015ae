package io.kvbridge.sample.deployment;

import io.kvbridge.layout.KvModel;
import io.kvbridge.sample.engine.ToyModel;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * The multi-process deployment with DeepSeek-V3's MLA latent per layer ({@link
 * PresetDeployments#DEEPSEEK_MLA}) on the fake connector's shared-directory mode.
 */
class FakeDeepSeekMlaDeploymentTest extends MultiProcessDeployment {

  @Override
  List<String> connectorArguments(Path work) throws IOException {
    return FakeSharedDirectoryDeploymentTest.sharedDirectoryArguments(work);
  }

  @Override
  List<String> modelArguments() {
    return PresetDeployments.DEEPSEEK_MLA;
  }

  @Override
  ToyModel reference() {
    return PresetDeployments.reference(KvModel.DEEPSEEK_V3);
  }
}
