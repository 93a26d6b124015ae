package io.kvbridge.transfer;

import java.util.List;
import java.util.Objects;

/**
 * The pieces of one side of a transfer, all of one memory kind. A READ or WRITE pairs a local and a
 * remote list of the same size, piece by piece, with equal lengths.
 */
public record DescriptorList(MemoryKind kind, List<Descriptor> descriptors) {

  /** Copies the list; rejects an empty one. */
  public DescriptorList {
    Objects.requireNonNull(kind, "kind");
    descriptors = List.copyOf(descriptors);
    if (descriptors.isEmpty()) {
      throw new IllegalArgumentException("a descriptor list needs at least one descriptor");
    }
  }

  /** The total number of bytes described. */
  public long totalBytes() {
    long total = 0;
    for (Descriptor d : descriptors) {
      total += d.length();
    }
    return total;
  }

  /** Throws unless {@code other} pairs with this list piece by piece. */
  public void checkPairsWith(DescriptorList other) {
    if (descriptors.size() != other.descriptors.size()) {
      throw new IllegalArgumentException(
          "local and remote lists differ in size: "
              + descriptors.size()
              + " vs "
              + other.descriptors.size());
    }
    for (int i = 0; i < descriptors.size(); i++) {
      if (descriptors.get(i).length() != other.descriptors.get(i).length()) {
        throw new IllegalArgumentException(
            "descriptor "
                + i
                + " lengths differ: "
                + descriptors.get(i).length()
                + " vs "
                + other.descriptors.get(i).length());
      }
    }
  }
}
