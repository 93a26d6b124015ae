package io.kvbridge.sample.deployment;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/** Restarts of P and of D on the fake connector's shared-directory mode. */
class FakeSharedDirectoryRestartTest extends NodeRestartScenario {

  @Override
  List<String> connectorArguments(Path work) throws IOException {
    return FakeSharedDirectoryDeploymentTest.sharedDirectoryArguments(work);
  }

  @Override
  Stream<Restart> restarts() {
    return Stream.of(
        new Restart(Node.PREFILL, Stop.KILL, HandshakePort.FIXED),
        new Restart(Node.DECODE, Stop.KILL, HandshakePort.FIXED),
        new Restart(Node.DECODE, Stop.TERMINATE, HandshakePort.FIXED),
        new Restart(Node.PREFILL, Stop.TERMINATE, HandshakePort.EPHEMERAL));
  }
}
