package io.kvbridge.runtime.engine;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.transfer.KvRegions;
import io.kvbridge.transfer.Transport;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The tensor-parallel ranks of one engine: each rank's transport agent and, once the engine
 * registered it, its KV memory and layout. Rank 0 is the lead: the protocol's notifications and
 * handshakes go through its agent; every rank's agent moves its own bytes.
 *
 * <p>Threads: registration happens under the connector's lock; the registered values are then read
 * from any thread (they never change again).
 */
public final class Ranks {

  private final List<Transport> transports;
  private final KvRegions[] memories;
  private final KvLayout[] layouts;
  private volatile boolean complete;

  public Ranks(List<Transport> transports) {
    if (transports.isEmpty()) {
      throw new IllegalArgumentException("an engine has at least one rank");
    }
    this.transports = List.copyOf(transports);
    this.memories = new KvRegions[transports.size()];
    this.layouts = new KvLayout[transports.size()];
  }

  public int count() {
    return transports.size();
  }

  public Transport transport(int rank) {
    return transports.get(rank);
  }

  public List<Transport> transports() {
    return transports;
  }

  /** The lead rank's transport. */
  public Transport lead() {
    return transports.get(0);
  }

  /**
   * Records rank {@code rank}'s KV cache (its regions and layout); returns whether every rank now
   * has one.
   *
   * @throws IllegalStateException if the rank already has one, or its layout disagrees with another
   *     rank's on anything but the heads it holds
   */
  public boolean register(int rank, KvRegions memory) {
    KvLayout layout = memory.layout();
    check(rank, layout);
    memories[rank] = memory;
    layouts[rank] = layout;
    for (KvRegions m : memories) {
      if (m == null) {
        return false;
      }
    }
    complete = true;
    return true;
  }

  /**
   * Checks that rank {@code rank} may register a KV cache of {@code layout}: it has none yet, its
   * layout agrees with the other ranks' on everything but the heads, and, if it is the last rank,
   * the ranks' heads partition the model's.
   *
   * @throws IllegalStateException if the rank already has a KV cache
   * @throws IllegalArgumentException if the layout does not fit the other ranks'
   */
  public void check(int rank, KvLayout layout) {
    if (memories[rank] != null) {
      throw new IllegalStateException("rank " + rank + " already has a KV cache registered");
    }
    int missing = 0;
    for (KvLayout other : layouts) {
      if (other == null) {
        missing++;
      } else if (!sameButHeads(other, layout)) {
        throw new IllegalArgumentException(
            "rank " + rank + "'s layout " + layout + " does not match another rank's " + other);
      }
    }
    if (missing == 1) {
      List<KvLayout> all = new ArrayList<>(Arrays.asList(layouts));
      all.set(rank, layout);
      KvLayout.partitionProblem(all)
          .ifPresent(
              problem -> {
                throw new IllegalArgumentException(
                    "the ranks' KV layouts do not split one model: " + problem);
              });
    }
  }

  /** Whether every rank registered its KV cache. */
  public boolean complete() {
    return complete;
  }

  public KvRegions memory(int rank) {
    return memories[rank];
  }

  public KvLayout layout(int rank) {
    return layouts[rank];
  }

  /** Every rank's layout, by rank; complete only. */
  public List<KvLayout> layouts() {
    return List.of(layouts);
  }

  /** Every rank's memory, by rank; complete only. */
  public List<KvRegions> memories() {
    return List.of(memories);
  }

  private static boolean sameButHeads(KvLayout a, KvLayout b) {
    return a.model().equals(b.model())
        && a.dtypeBytes() == b.dtypeBytes()
        && a.layers() == b.layers()
        && a.planes() == b.planes()
        && a.kvHeads() == b.kvHeads()
        && a.headDim() == b.headDim()
        && a.tokensPerBlock() == b.tokensPerBlock()
        && a.blockCount() == b.blockCount()
        && a.order() == b.order()
        && a.placement() == b.placement();
  }
}
