package io.kvbridge.sample.router;

import java.util.Objects;
import java.util.OptionalInt;

/**
 * What a node's registration says of its load, as last published: how many KV blocks its engine has
 * free and how many leases it holds for decode nodes. Unknown for nodes configured by URL.
 *
 * @param freeBlocks KV blocks free, if the node says
 * @param liveLeases leases held for decode nodes, if the node says
 */
public record NodeLoad(OptionalInt freeBlocks, OptionalInt liveLeases) {

  /** Nothing known. */
  public static final NodeLoad UNKNOWN = new NodeLoad(OptionalInt.empty(), OptionalInt.empty());

  /** Checks the values. */
  public NodeLoad {
    Objects.requireNonNull(freeBlocks, "freeBlocks");
    Objects.requireNonNull(liveLeases, "liveLeases");
  }
}
