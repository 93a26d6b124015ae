package io.kvbridge.sample.deployment;

import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/**
 * Restarts of P and of D on the NIXL connector, in host memory (see {@link NixlDeploymentTest} for
 * where NIXL comes from and when a missing NIXL skips instead of failing).
 */
class NixlRestartTest extends NodeRestartScenario {

  @Override
  List<String> connectorArguments(Path work) {
    return NixlDeploymentTest.nixlArguments();
  }

  @Override
  Stream<Restart> restarts() {
    return Stream.of(
        new Restart(Node.DECODE, Stop.KILL, HandshakePort.FIXED),
        new Restart(Node.PREFILL, Stop.KILL, HandshakePort.FIXED),
        new Restart(Node.PREFILL, Stop.TERMINATE, HandshakePort.EPHEMERAL));
  }
}
