package io.kvbridge.transfer;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A descriptor list a {@link Transport} prepared once, so that many transfers can be posted from it
 * by index ({@link Transport#post(TransferOp, PreparedList, int[], PreparedList, int[], Optional)})
 * instead of describing and checking every piece again per transfer; NIXL's prepared descriptor
 * list handle. A list describes either local memory or the memory of one remote agent, as that
 * agent's loaded metadata showed it when the list was prepared.
 *
 * <p>A list is usable until it is {@linkplain Transport#release(PreparedList) released} or its
 * transport closes; a remote list also until its agent's metadata is invalidated or loaded again (a
 * restarted peer needs lists prepared afresh), a local list until memory it lies in is
 * deregistered. A post from a list that is no longer usable is refused with {@link
 * TransportException}, before any byte moves. (The {@link Transport} interface's default methods,
 * which prepare nothing ahead, are laxer: see there.)
 *
 * @param id assigned by the transport that prepared the list, unique within it; 0 where the
 *     transport prepares nothing ahead (the {@link Transport} interface's default methods)
 * @param remoteAgent the agent whose memory the list describes; empty for local memory
 * @param descriptors the pieces, each addressed by its index in this list
 */
public record PreparedList(long id, Optional<String> remoteAgent, DescriptorList descriptors) {

  /** Rejects missing parts. */
  public PreparedList {
    Objects.requireNonNull(remoteAgent, "remoteAgent");
    Objects.requireNonNull(descriptors, "descriptors");
  }

  /** Whether the list describes local memory. */
  public boolean isLocal() {
    return remoteAgent.isEmpty();
  }

  /** The number of pieces: valid indices are 0 to {@code size() - 1}. */
  public int size() {
    return descriptors.descriptors().size();
  }

  /**
   * The pieces at {@code indices}, in that order.
   *
   * @throws TransportException if an index lies outside the list or there are none
   */
  public DescriptorList select(int[] indices) {
    checkIndices(indices);
    List<Descriptor> all = descriptors.descriptors();
    List<Descriptor> picked = new ArrayList<>(indices.length);
    for (int index : indices) {
      picked.add(all.get(index));
    }
    return new DescriptorList(descriptors.kind(), picked);
  }

  /**
   * Throws unless {@code indices} is non-empty and every index lies inside this list.
   *
   * @throws TransportException naming the first index outside the list
   */
  public void checkIndices(int[] indices) {
    Objects.requireNonNull(indices, "indices");
    if (indices.length == 0) {
      throw new TransportException("a transfer needs at least one index into a prepared list");
    }
    int size = size();
    for (int i = 0; i < indices.length; i++) {
      if (indices[i] < 0 || indices[i] >= size) {
        throw new TransportException(
            "index "
                + indices[i]
                + " (position "
                + i
                + ") lies outside a prepared list of "
                + size
                + " descriptors; valid indices are 0 to "
                + (size - 1));
      }
    }
  }

  /**
   * The length of every piece, by index: what a transport compares per transfer without looking at
   * the descriptors again.
   */
  public long[] lengths() {
    List<Descriptor> all = descriptors.descriptors();
    long[] lengths = new long[all.size()];
    for (int i = 0; i < lengths.length; i++) {
      lengths[i] = all.get(i).length();
    }
    return lengths;
  }

  /**
   * Throws unless {@code local} describes local memory and {@code remote} a peer's, the two sides a
   * transfer posted from prepared lists needs.
   *
   * @throws TransportException naming both lists
   */
  public static void requireSides(TransferOp op, PreparedList local, PreparedList remote) {
    if (!local.isLocal() || remote.isLocal()) {
      throw new TransportException(
          "cannot post a "
              + op
              + " from "
              + local
              + " and "
              + remote
              + ": the first list must describe local memory and the second a peer's");
    }
  }

  /** A short description for messages: its side and size, not every piece. */
  @Override
  public String toString() {
    return "PreparedList["
        + id
        + ", "
        + remoteAgent.map(a -> "memory of " + a).orElse("local memory")
        + ", "
        + size()
        + " "
        + descriptors.kind()
        + " descriptors]";
  }
}
