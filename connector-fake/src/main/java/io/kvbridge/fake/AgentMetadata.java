package io.kvbridge.fake;

import io.kvbridge.transfer.Descriptor;
import io.kvbridge.transfer.MemoryKind;
import io.kvbridge.transfer.TransportException;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * What a fake agent's metadata blob says: which fabric it lives on, its name and incarnation, and
 * the memory regions it registered.
 *
 * <p>Wire form: the magic {@code "KVBF"}, a version byte, the fabric identity (text), the agent
 * name (text), the instance id (64 bits), a region count (32 bits), then per region its address and
 * length (64 bits each), device id (32 bits), memory kind (8 bits) and backing file name (text,
 * empty for heap memory). Text is UTF-8 with a 16-bit length. {@link #decode} accepts nothing else:
 * a blob is untrusted input.
 *
 * @param fabric the identity of the fabric the agent lives on
 * @param agentName the agent's name
 * @param instanceId distinguishes an agent from an earlier one of the same name
 * @param regions the registered regions, sorted by address, non-overlapping
 */
record AgentMetadata(String fabric, String agentName, long instanceId, List<Region> regions) {

  static final int MAX_NAME = 256;
  static final int MAX_FABRIC = 4096;
  static final int MAX_FILE = 255;
  static final int MAX_REGIONS = 65_536;

  private static final byte[] MAGIC = {'K', 'V', 'B', 'F'};
  private static final int VERSION = 1;
  private static final int REGION_MIN_BYTES = 8 + 8 + 4 + 1 + 2;

  AgentMetadata {
    regions = regions.stream().sorted(Comparator.comparingLong(Region::address)).toList();
  }

  /**
   * One registered region.
   *
   * @param address its base address
   * @param length its size in bytes
   * @param deviceId its device
   * @param kind host or device memory
   * @param file the file backing it in shared-directory mode, empty otherwise
   */
  record Region(long address, long length, int deviceId, MemoryKind kind, String file) {

    boolean contains(Descriptor d, MemoryKind listKind) {
      return kind == listKind && deviceId == d.deviceId() && d.within(address, length);
    }
  }

  /** The region that holds all of {@code d}, if any. */
  Optional<Region> regionHolding(Descriptor d, MemoryKind listKind) {
    int at = regionAtOrBefore(d.address());
    return at >= 0 && regions.get(at).contains(d, listKind)
        ? Optional.of(regions.get(at))
        : Optional.empty();
  }

  /** Whether one region holds all of {@code d}; allocates nothing. */
  boolean covers(Descriptor d, MemoryKind listKind) {
    int at = regionAtOrBefore(d.address());
    return at >= 0 && regions.get(at).contains(d, listKind);
  }

  /** The index of the last region starting at or before {@code address}, or -1. */
  private int regionAtOrBefore(long address) {
    // Regions are sorted by address and disjoint: only the last one starting at or before the
    // address can hold it.
    int low = 0;
    int high = regions.size() - 1;
    int found = -1;
    while (low <= high) {
      int mid = (low + high) >>> 1;
      if (regions.get(mid).address() <= address) {
        found = mid;
        low = mid + 1;
      } else {
        high = mid - 1;
      }
    }
    return found;
  }

  byte[] encode() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(64 + 40 * regions.size());
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.write(MAGIC);
      out.writeByte(VERSION);
      writeText(out, fabric);
      writeText(out, agentName);
      out.writeLong(instanceId);
      out.writeInt(regions.size());
      for (Region r : regions) {
        out.writeLong(r.address());
        out.writeLong(r.length());
        out.writeInt(r.deviceId());
        out.writeByte(r.kind().ordinal());
        writeText(out, r.file());
      }
    } catch (IOException e) {
      throw new UncheckedIOException("writing to memory cannot fail", e);
    }
    return bytes.toByteArray();
  }

  /**
   * Parses a blob.
   *
   * @throws TransportException naming the defect if the blob is not a fake agent's metadata
   */
  static AgentMetadata decode(byte[] blob) {
    ByteBuffer in = ByteBuffer.wrap(blob);
    try {
      byte[] magic = new byte[MAGIC.length];
      in.get(magic);
      if (!Arrays.equals(magic, MAGIC)) {
        throw malformed("it does not start with the fake transport's magic bytes");
      }
      int version = Byte.toUnsignedInt(in.get());
      if (version != VERSION) {
        throw malformed("version " + version + " is not supported (expected " + VERSION + ")");
      }
      String fabric = readText(in, "fabric identity", 1, MAX_FABRIC);
      String name = readText(in, "agent name", 1, MAX_NAME);
      if (name.isBlank()) {
        throw malformed("the agent name is blank");
      }
      long instanceId = in.getLong();
      int count = in.getInt();
      if (count < 0 || count > MAX_REGIONS || (long) count * REGION_MIN_BYTES > in.remaining()) {
        throw malformed("it claims " + count + " regions in " + in.remaining() + " bytes");
      }
      List<Region> regions = new ArrayList<>(count);
      for (int i = 0; i < count; i++) {
        regions.add(readRegion(in, i));
      }
      if (in.hasRemaining()) {
        throw malformed(in.remaining() + " unexpected trailing bytes");
      }
      AgentMetadata metadata = new AgentMetadata(fabric, name, instanceId, regions);
      metadata.checkDisjoint();
      return metadata;
    } catch (BufferUnderflowException e) {
      throw malformed("it is truncated (" + blob.length + " bytes)");
    }
  }

  private static Region readRegion(ByteBuffer in, int index) {
    long address = in.getLong();
    long length = in.getLong();
    int deviceId = in.getInt();
    int kind = Byte.toUnsignedInt(in.get());
    String file = readText(in, "file name of region " + index, 0, MAX_FILE);
    if (length <= 0 || address < 0 || address > Long.MAX_VALUE - length) {
      throw malformed(
          "region " + index + " at " + address + " with length " + length + " is impossible");
    }
    if (deviceId < 0) {
      throw malformed("region " + index + " names device " + deviceId);
    }
    if (kind >= MemoryKind.values().length) {
      throw malformed("region " + index + " has unknown memory kind " + kind);
    }
    if (file.contains("/") || file.contains("\\") || file.equals("..") || file.equals(".")) {
      throw malformed("region " + index + " names a file outside the agent's directory");
    }
    return new Region(address, length, deviceId, MemoryKind.values()[kind], file);
  }

  private void checkDisjoint() {
    for (int i = 1; i < regions.size(); i++) {
      Region previous = regions.get(i - 1);
      if (previous.address() + previous.length() > regions.get(i).address()) {
        throw malformed("regions at " + previous.address() + " and later overlap");
      }
    }
  }

  private static void writeText(DataOutputStream out, String text) throws IOException {
    byte[] utf8 = text.getBytes(StandardCharsets.UTF_8);
    out.writeShort(utf8.length);
    out.write(utf8);
  }

  private static String readText(ByteBuffer in, String field, int minBytes, int maxBytes) {
    int length = Short.toUnsignedInt(in.getShort());
    if (length < minBytes || length > maxBytes) {
      throw malformed(field + " is " + length + " bytes; expected " + minBytes + " to " + maxBytes);
    }
    byte[] utf8 = new byte[length];
    in.get(utf8);
    try {
      CharBuffer chars =
          StandardCharsets.UTF_8
              .newDecoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT)
              .decode(ByteBuffer.wrap(utf8));
      return chars.toString();
    } catch (CharacterCodingException e) {
      throw malformed(field + " is not valid UTF-8");
    }
  }

  private static TransportException malformed(String why) {
    return new TransportException(
        "cannot load peer metadata: "
            + why
            + "; pass the unmodified blob from the peer's localMetadata()");
  }
}
