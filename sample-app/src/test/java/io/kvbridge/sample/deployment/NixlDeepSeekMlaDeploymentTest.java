package io.kvbridge.sample.deployment;

import io.kvbridge.layout.KvModel;
import io.kvbridge.sample.engine.ToyModel;
import java.nio.file.Path;
import java.util.List;

/**
 * The multi-process deployment with DeepSeek-V3's MLA latent per layer ({@link
 * PresetDeployments#DEEPSEEK_MLA}) on NIXL in host memory.
 */
class NixlDeepSeekMlaDeploymentTest extends MultiProcessDeployment {

  @Override
  List<String> connectorArguments(Path work) {
    return NixlDeploymentTest.nixlArguments();
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
