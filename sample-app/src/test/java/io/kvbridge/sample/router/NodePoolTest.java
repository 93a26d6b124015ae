package io.kvbridge.sample.router;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.sample.node.NodeKind;
import java.net.URI;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * How a pool chooses a node: healthy ones only; by published load (free blocks in eighths, live
 * leases), then the fewest calls in flight; ties in turn. How a followed pool's nodes are replaced.
 */
class NodePoolTest {

  private final PooledNode a = node("a");
  private final PooledNode b = node("b");
  private final PooledNode c = node("c");
  private final NodePool pool = new NodePool(NodeKind.DECODE, List.of(a, b, c));

  @Test
  void theNodeHoldingMostOfThePromptsPrefixIsChosenUntilItIsBusierThanTheSlack() {
    Map<PooledNode, Integer> cached = Map.of(a, 1, b, 3);

    for (int call = 0; call <= NodePool.CACHE_LOAD_SLACK; call++) {
      assertThat(pool.acquire(Set.of(), cached)).contains(b);
    }
    // b now has more calls in flight than the least busy plus the slack: the load decides.
    assertThat(pool.acquire(Set.of(), cached)).isPresent().get().isNotEqualTo(b);
  }

  @Test
  void withNoNodeHoldingThePrefixTheLoadAloneDecides() {
    assertThat(pool.acquire(Set.of(), Map.of(a, 0))).contains(a);
    assertThat(pool.acquire(Set.of(), Map.of())).isPresent().get().isNotEqualTo(a);
  }

  /** Choices and releases from many threads at once, without a lock: no call is miscounted. */
  @Test
  void callsChosenAndReleasedFromManyThreadsAtOnceAreEachCountedOnce() throws Exception {
    int threads = 8;
    int calls = 5_000;
    ExecutorService executor = Executors.newFixedThreadPool(threads);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        done.add(
            executor.submit(
                () -> {
                  for (int i = 0; i < calls; i++) {
                    PooledNode node = pool.acquire(Set.of()).orElseThrow();
                    pool.release(node, NodePool.Outcome.SERVED);
                  }
                }));
      }
      for (Future<?> f : done) {
        f.get();
      }
    } finally {
      executor.shutdownNow();
    }

    assertThat(pool.stats()).allSatisfy(s -> assertThat(s.inFlight()).isZero());
    assertThat(pool.stats().stream().mapToLong(NodeStats::served).sum())
        .isEqualTo((long) threads * calls);
  }

  @Test
  void equallyLoadedNodesTakeTurnsInConfiguredOrder() {
    assertThat(chooseSix()).containsExactly(a, b, c, a, b, c);
  }

  @Test
  void theNodeWithTheFewestCallsInFlightIsChosen() {
    PooledNode first = pool.acquire(Set.of()).orElseThrow();
    PooledNode second = pool.acquire(Set.of()).orElseThrow();
    pool.acquire(Set.of()).orElseThrow();
    pool.release(second, NodePool.Outcome.SERVED);

    assertThat(pool.acquire(Set.of())).contains(second);
    assertThat(pool.acquire(Set.of())).isPresent().get().isNotEqualTo(first);
  }

  @Test
  void aNodeNotProbedYetIsChosen() {
    assertThat(a.health()).isEqualTo(NodeHealth.unprobed());
    assertThat(pool.acquire(Set.of())).contains(a);
  }

  @Test
  void aNodeMarkedDownIsSkipped() {
    pool.callFailed(b, "decode node at b could not be reached");

    assertThat(chooseSix()).containsExactly(a, c, a, c, a, c);
  }

  @Test
  void aFailedCallMarksTheNodeDownAtOnce() {
    pool.callFailed(b, "decode node at b could not be reached");

    assertThat(b.health()).isEqualTo(NodeHealth.down("decode node at b could not be reached"));
  }

  @Test
  void oneProbeThatIsNotUpIsForgivenAndTwoInARowMarkTheNodeDown() {
    NodeHealth slow = NodeHealth.down("health at b did not answer within 2000 ms");

    pool.probed(b, slow);
    assertThat(b.health().up()).isTrue();
    pool.probed(b, slow);
    assertThat(b.health()).isEqualTo(slow);
  }

  @Test
  void anUpProbeBetweenTwoFailedOnesKeepsTheNodeUp() {
    NodeHealth slow = NodeHealth.down("health at b did not answer within 2000 ms");

    pool.probed(b, slow);
    pool.probed(b, NodeHealth.probedUp());
    pool.probed(b, slow);

    assertThat(b.health().up()).isTrue();
  }

  @Test
  void aDownNodeFoundUpByOneProbeIsChosenAgain() {
    pool.callFailed(b, "decode node at b answered HTTP 503");

    pool.probed(b, NodeHealth.probedUp());

    assertThat(b.health()).isEqualTo(NodeHealth.probedUp());
    assertThat(chooseSix()).contains(b);
  }

  @Test
  void anExcludedNodeIsNotChosen() {
    assertThat(pool.acquire(Set.of(a, b))).contains(c);
    assertThat(pool.acquire(Set.of(a, b, c))).isEmpty();
  }

  @Test
  void withEveryNodeDownThereIsNoChoiceAndEachNodeSaysWhy() {
    for (PooledNode node : pool.nodes()) {
      node.health(NodeHealth.down("health of " + node.name() + " answered HTTP 503"));
    }

    assertThat(pool.anyHealthy()).isFalse();
    assertThat(pool.acquire(Set.of())).isEmpty();
    assertThat(pool.whyDown())
        .isEqualTo(
            "a: health of a answered HTTP 503; b: health of b answered HTTP 503;"
                + " c: health of c answered HTTP 503");
  }

  @Test
  void statsCountEachNodesCallsInFlightServedFailedAndCancelled() {
    PooledNode first = pool.acquire(Set.of()).orElseThrow();
    pool.release(first, NodePool.Outcome.SERVED);
    PooledNode second = pool.acquire(Set.of()).orElseThrow();
    pool.release(second, NodePool.Outcome.FAILED);
    PooledNode third = pool.acquire(Set.of()).orElseThrow();
    pool.release(third, NodePool.Outcome.CANCELLED);
    pool.acquire(Set.of()).orElseThrow();
    b.health(NodeHealth.down("why"));

    assertThat(pool.stats())
        .containsExactly(
            new NodeStats("a", true, "not probed yet", 1, 1, 0, 0),
            new NodeStats("b", false, "why", 0, 0, 1, 0),
            new NodeStats("c", true, "not probed yet", 0, 0, 0, 1));
  }

  @Test
  void theNodeWithMoreFreeBlocksIsChosenBeforeFewerCallsInFlight() {
    NodePool followed = NodePool.followed(NodeKind.PREFILL, "none registered");
    followed.replace(loads(a, load(4000, 0), b, load(1000, 0)));

    assertThat(followed.acquire(Set.of())).contains(a);
    assertThat(followed.acquire(Set.of()))
        .as("a has a call in flight, b is far emptier")
        .contains(a);
  }

  @Test
  void freeBlocksWithinAnEighthOfTheMostCountAlikeAndFewerLiveLeasesDecide() {
    NodePool followed = NodePool.followed(NodeKind.PREFILL, "none registered");
    followed.replace(loads(a, load(4000, 3), b, load(3900, 1)));

    assertThat(followed.acquire(Set.of())).contains(b);
  }

  @Test
  void equalLoadsAreDecidedByCallsInFlight() {
    NodePool followed = NodePool.followed(NodeKind.PREFILL, "none registered");
    followed.replace(loads(a, load(4000, 0), b, load(4000, 0)));

    PooledNode first = followed.acquire(Set.of()).orElseThrow();

    assertThat(followed.acquire(Set.of())).isPresent().get().isNotEqualTo(first);
  }

  @Test
  void aNodeLeftOutOfAReplacementLeavesThePoolAndOneKeptKeepsItsCounters() {
    NodePool followed = NodePool.followed(NodeKind.DECODE, "none registered");
    followed.replace(loads(a, NodeLoad.UNKNOWN, b, NodeLoad.UNKNOWN));
    PooledNode inFlight = followed.acquire(Set.of()).orElseThrow();

    followed.replace(loads(node(inFlight.name()), NodeLoad.UNKNOWN, c, NodeLoad.UNKNOWN));

    assertThat(followed.nodes()).containsExactly(inFlight, c);
    assertThat(followed.stats().get(0).inFlight()).isEqualTo(1);
  }

  @Test
  void anEmptyFollowedPoolChoosesNothingAndSaysWhy() {
    NodePool followed = NodePool.followed(NodeKind.DECODE, "no decode node is registered in etcd");

    assertThat(followed.acquire(Set.of())).isEmpty();
    assertThat(followed.anyHealthy()).isFalse();
    assertThat(followed.whyDown()).isEqualTo("no decode node is registered in etcd");
  }

  @Test
  void aPoolNeedsANode() {
    assertThatThrownBy(() -> new NodePool(NodeKind.PREFILL, List.of()))
        .hasMessage("a pool of prefill nodes needs a node");
  }

  private List<PooledNode> chooseSix() {
    List<PooledNode> chosen = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      PooledNode node = pool.acquire(Set.of()).orElseThrow();
      chosen.add(node);
      pool.release(node, NodePool.Outcome.SERVED);
    }
    return chosen;
  }

  private static NodeLoad load(int freeBlocks, int liveLeases) {
    return new NodeLoad(OptionalInt.of(freeBlocks), OptionalInt.of(liveLeases));
  }

  private static Map<PooledNode, NodeLoad> loads(
      PooledNode first, NodeLoad firstLoad, PooledNode second, NodeLoad secondLoad) {
    Map<PooledNode, NodeLoad> loads = new LinkedHashMap<>();
    loads.put(first, firstLoad);
    loads.put(second, secondLoad);
    return loads;
  }

  private static PooledNode node(String name) {
    return new PooledNode(name, () -> URI.create("http://" + name), "/actuator/health");
  }
}
