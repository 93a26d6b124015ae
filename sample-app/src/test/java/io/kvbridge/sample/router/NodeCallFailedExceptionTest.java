package io.kvbridge.sample.router;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.sample.node.NodeKind;
import org.junit.jupiter.api.Test;

/**
 * Which failed calls the router holds against the node it called: its own silence or failure, not a
 * decode node's report that the prefill node failed it.
 */
class NodeCallFailedExceptionTest {

  @Test
  void aDecodeNodesLoadThatTimedOutWaitingOnThePrefillNodeDoesNotBlameIt() {
    NodeCallFailedException failure =
        NodeCallFailedException.answered(NodeKind.DECODE, 504, "kv_load_timeout", "waited on P");

    assertThat(failure.blamesNode()).isFalse();
    assertThat(failure.status()).isEqualTo(504);
  }

  @Test
  void aDecodeNodesFailedLoadDoesNotBlameIt() {
    assertThat(
            NodeCallFailedException.answered(NodeKind.DECODE, 502, "kv_load_failed", "lease gone")
                .blamesNode())
        .isFalse();
  }

  @Test
  void aDecodeNodesOwnTimeoutBlamesIt() {
    assertThat(
            NodeCallFailedException.answered(NodeKind.DECODE, 504, "timeout", "engine stuck")
                .blamesNode())
        .isTrue();
  }

  @Test
  void aDecodeNodeThatDidNotAnswerWithinTheRoutersTimeoutIsBlamed() {
    assertThat(
            NodeCallFailedException.withoutAnswer(
                    NodeKind.DECODE, NodeCallFailedException.Kind.TIMED_OUT, "no answer", null)
                .blamesNode())
        .isTrue();
  }

  @Test
  void aServerErrorWithoutAReasonBlamesTheNode() {
    assertThat(NodeCallFailedException.answered(NodeKind.DECODE, 500, null, "?").blamesNode())
        .isTrue();
  }
}
