package io.kvbridge.sample.deployment;

import io.kvbridge.layout.KvModel;
import io.kvbridge.sample.engine.ToyModel;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * The multi-process deployment with Llama-3.1-8B's KV in per-layer tensors ({@link
 * PresetDeployments#LLAMA_PER_LAYER}) on the fake connector's shared-directory mode.
 */
class FakeLlamaPerLayerDeploymentTest extends MultiProcessDeployment {

  @Override
  List<String> connectorArguments(Path work) throws IOException {
    return FakeSharedDirectoryDeploymentTest.sharedDirectoryArguments(work);
  }

  @Override
  List<String> modelArguments() {
    return PresetDeployments.LLAMA_PER_LAYER;
  }

  @Override
  ToyModel reference() {
    return PresetDeployments.reference(KvModel.LLAMA_3_1_8B);
  }
}
