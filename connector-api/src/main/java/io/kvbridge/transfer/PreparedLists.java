package io.kvbridge.transfer;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * The lists one {@link AgentCore} prepared and still holds usable, by id, each with its backend's
 * form, the length of every piece and the local memory it lies in; and the checks of a post by
 * indices. Confined to its core's lock: changes under the write lock, lookups under either.
 *
 * @param <L> the backend's prepared list
 */
final class PreparedLists<L> {

  /** A list the core prepared: the backend's form, each piece's length, the memory it lies in. */
  static final class Entry<L> {
    final PreparedList prepared;
    final L list;
    final long[] lengths;
    final List<KvMemory> memories;

    private Entry(PreparedList prepared, L list, List<KvMemory> memories) {
      this.prepared = prepared;
      this.list = list;
      this.memories = memories;
      this.lengths = prepared.lengths();
    }

    boolean isOf(String remoteAgent) {
      return remoteAgent.equals(prepared.remoteAgent().orElse(null));
    }
  }

  private final String agentName;
  private final Map<Long, Entry<L>> byId = new HashMap<>();
  private long nextId = 1;

  PreparedLists(String agentName) {
    this.agentName = agentName;
  }

  /** Keeps {@code list}, the backend's form of {@code pieces}, under a new id. */
  PreparedList keep(
      Optional<String> remoteAgent, DescriptorList pieces, L list, List<KvMemory> memories) {
    PreparedList prepared = new PreparedList(nextId++, remoteAgent, pieces);
    byId.put(prepared.id(), new Entry<>(prepared, list, memories));
    return prepared;
  }

  /** Removes {@code list} if it is the one kept under its id; returns its backend form. */
  Optional<L> remove(PreparedList list) {
    Entry<L> known = byId.get(list.id());
    if (known == null || known.prepared != list) {
      return Optional.empty();
    }
    byId.remove(list.id());
    return Optional.of(known.list);
  }

  /** Removes the lists {@code which} selects; returns their backend forms. */
  List<L> removeIf(Predicate<Entry<L>> which) {
    List<L> removed = new ArrayList<>();
    for (Iterator<Entry<L>> it = byId.values().iterator(); it.hasNext(); ) {
      Entry<L> e = it.next();
      if (which.test(e)) {
        it.remove();
        removed.add(e.list);
      }
    }
    return removed;
  }

  boolean isEmpty() {
    return byId.isEmpty();
  }

  /** The list as this agent prepared it, if still usable. */
  Entry<L> usable(PreparedList list, TransferOp op) {
    Entry<L> known = byId.get(list.id());
    if (known == null || (known.prepared != list && !known.prepared.equals(list))) {
      throw new TransportException(
          "agent "
              + agentName
              + " cannot post a "
              + op
              + " from "
              + list
              + ": it was not prepared here, was released, or is no longer usable (its peer was"
              + " invalidated or reloaded, or its memory deregistered); prepare it again");
    }
    return known;
  }

  /**
   * Checks that the indices select pieces inside both lists that pair in length; returns the bytes
   * they hold.
   *
   * @param what the transfer, for messages
   */
  static long checkSelection(
      String what, Entry<?> local, int[] localIndices, Entry<?> remote, int[] remoteIndices) {
    if (localIndices.length != remoteIndices.length) {
      throw new TransportException(
          "cannot post "
              + what
              + ": "
              + localIndices.length
              + " local indices and "
              + remoteIndices.length
              + " remote ones; they pair position by position");
    }
    local.prepared.checkIndices(localIndices);
    remote.prepared.checkIndices(remoteIndices);
    long bytes = 0;
    for (int i = 0; i < localIndices.length; i++) {
      long length = local.lengths[localIndices[i]];
      if (length != remote.lengths[remoteIndices[i]]) {
        throw new TransportException(
            "cannot post "
                + what
                + ": at position "
                + i
                + " local piece "
                + localIndices[i]
                + " has "
                + length
                + " bytes, remote piece "
                + remoteIndices[i]
                + " has "
                + remote.lengths[remoteIndices[i]]);
      }
      bytes += length;
    }
    return bytes;
  }
}
