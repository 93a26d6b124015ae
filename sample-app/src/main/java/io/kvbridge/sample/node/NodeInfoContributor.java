package io.kvbridge.sample.node;

import io.kvbridge.sample.engine.EngineStats;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.actuate.info.Info;
import org.springframework.boot.actuate.info.InfoContributor;

/**
 * Adds each node's engine counters ({@link EngineStats}) to the {@code info} endpoint under {@code
 * kvbridgeNodes}, by node kind: the prompt tokens it took from its prefix cache, loaded and
 * computed, the blocks it holds and caches, and its requests.
 */
public final class NodeInfoContributor implements InfoContributor {

  private final List<Node> nodes;

  /** Reports {@code nodes}. */
  public NodeInfoContributor(List<Node> nodes) {
    this.nodes = List.copyOf(nodes);
  }

  @Override
  public void contribute(Info.Builder builder) {
    Map<String, EngineStats> stats = new LinkedHashMap<>();
    nodes.forEach(node -> stats.put(node.kind().id(), node.engine().stats()));
    builder.withDetail("kvbridgeNodes", stats);
  }
}
