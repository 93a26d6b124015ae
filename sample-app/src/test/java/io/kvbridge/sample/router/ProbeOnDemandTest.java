package io.kvbridge.sample.router;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.sample.node.NodeKind;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * A pool without a healthy node has its down nodes probed when a request needs one: a node found UP
 * is chosen again at once; callers share the probe under way; a pool with a healthy node is not
 * probed.
 */
class ProbeOnDemandTest {

  private final PooledNode a = node("a");
  private final PooledNode b = node("b");
  private final NodePool pool = new NodePool(NodeKind.DECODE, List.of(a, b));
  private final List<PooledNode> asked = new ArrayList<>();

  @Test
  void aPoolWithAHealthyNodeIsNotProbed() {
    pool.callFailed(a, "decode node at a could not be reached");
    ProbeOnDemand probe = probe(node -> CompletableFuture.completedFuture(NodeHealth.probedUp()));

    assertThat(probe.anyHealthy()).isCompletedWithValue(true);
    assertThat(asked).isEmpty();
    assertThat(a.health().up()).isFalse();
  }

  @Test
  void aDownNodeFoundUpIsHealthyBeforeTheCallerHearsOfIt() {
    markBothDown();
    ProbeOnDemand probe =
        probe(
            node ->
                CompletableFuture.completedFuture(
                    node == a ? NodeHealth.probedUp() : NodeHealth.down("health at b: DOWN")));

    assertThat(probe.anyHealthy()).isCompletedWithValue(true);
    assertThat(a.health()).isEqualTo(NodeHealth.probedUp());
    assertThat(b.health()).isEqualTo(NodeHealth.down("health at b: DOWN"));
    assertThat(pool.acquire(List.of())).contains(a);
  }

  @Test
  void aPoolWhoseNodesAreStillDownIsUnhealthyWithTheProbesReasons() {
    markBothDown();
    ProbeOnDemand probe =
        probe(node -> CompletableFuture.completedFuture(NodeHealth.down("still down")));

    assertThat(probe.anyHealthy()).isCompletedWithValue(false);
    assertThat(asked).containsExactlyInAnyOrder(a, b);
    assertThat(pool.whyDown()).isEqualTo("a: still down; b: still down");
  }

  @Test
  void callersWhileAProbeRunsShareItAndHearTheSameAnswer() {
    markBothDown();
    List<CompletableFuture<NodeHealth>> answers = new ArrayList<>();
    ProbeOnDemand probe =
        probe(
            node -> {
              CompletableFuture<NodeHealth> answer = new CompletableFuture<>();
              answers.add(answer);
              return answer;
            });

    List<CompletableFuture<Boolean>> callers = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      callers.add(probe.anyHealthy());
    }
    assertThat(callers).allSatisfy(caller -> assertThat(caller).isNotDone());
    answers.forEach(answer -> answer.complete(NodeHealth.probedUp()));

    assertThat(asked).containsExactlyInAnyOrder(a, b);
    assertThat(callers).allSatisfy(caller -> assertThat(caller).isCompletedWithValue(true));
  }

  @Test
  void aCallerAfterAProbeEndedStartsTheNext() {
    markBothDown();
    ProbeOnDemand probe =
        probe(node -> CompletableFuture.completedFuture(NodeHealth.down("still down")));

    probe.anyHealthy().join();
    probe.anyHealthy().join();

    assertThat(asked).containsExactlyInAnyOrder(a, b, a, b);
  }

  @Test
  void onlyTheNodesThatAreDownAreAsked() {
    pool.callFailed(b, "decode node at b could not be reached");
    ProbeOnDemand probe = probe(node -> CompletableFuture.completedFuture(NodeHealth.probedUp()));

    probe.probeDownNodes().join();

    assertThat(asked).containsExactly(b);
    assertThat(b.health().up()).isTrue();
  }

  @Test
  void aNodeThatCannotBeAskedIsLeftAsItIs() {
    markBothDown();
    ProbeOnDemand probe =
        probe(
            node -> {
              if (node == a) {
                throw new IllegalStateException("this server has no port yet");
              }
              return CompletableFuture.completedFuture(NodeHealth.probedUp());
            });

    assertThat(probe.anyHealthy()).isCompletedWithValue(true);
    assertThat(a.health().up()).isFalse();
    assertThat(b.health().up()).isTrue();
  }

  private ProbeOnDemand probe(Function<PooledNode, CompletableFuture<NodeHealth>> health) {
    return new ProbeOnDemand(
        pool,
        node -> {
          asked.add(node);
          return health.apply(node);
        });
  }

  private void markBothDown() {
    pool.callFailed(a, "decode node at a could not be reached");
    pool.callFailed(b, "decode node at b could not be reached");
  }

  private static PooledNode node(String name) {
    return new PooledNode(name, () -> URI.create("http://" + name), "/actuator/health");
  }
}
