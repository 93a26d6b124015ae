package io.kvbridge.sample.deployment;

import io.kvbridge.layout.KvModel;
import io.kvbridge.sample.engine.ToyModel;
import java.nio.file.Path;
import java.util.List;

/**
 * The multi-process deployment streaming every request layer by layer ({@link
 * PresetDeployments#LLAMA_STREAMED}) on NIXL in host memory.
 */
class NixlStreamedDeploymentTest extends MultiProcessDeployment {

  @Override
  List<String> connectorArguments(Path work) {
    return NixlDeploymentTest.nixlArguments();
  }

  @Override
  List<String> modelArguments() {
    return PresetDeployments.LLAMA_STREAMED;
  }

  @Override
  ToyModel reference() {
    return PresetDeployments.reference(KvModel.LLAMA_3_1_8B);
  }

  @Override
  boolean streamed() {
    return true;
  }
}
