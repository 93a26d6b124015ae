package io.kvbridge.sample.deployment;

import io.kvbridge.layout.KvModel;
import io.kvbridge.sample.engine.ToyModel;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * The multi-process deployment streaming every request layer by layer ({@link
 * PresetDeployments#LLAMA_STREAMED}) on the fake connector's shared-directory mode: every served
 * answer is the colocated reference's, as without streaming, and every prefill node answered the
 * router as it granted the lease.
 */
class FakeStreamedDeploymentTest extends MultiProcessDeployment {

  @Override
  List<String> connectorArguments(Path work) throws IOException {
    return FakeSharedDirectoryDeploymentTest.sharedDirectoryArguments(work);
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
