package io.kvbridge.nixl;

import io.kvbridge.transfer.TransportException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Reads what a NIXL metadata blob says of its agent without loading it. NIXL's serializer writes
 * the ASCII header {@code "nixlSerDes|"}, then its fields as tag, length (a little-endian 64-bit
 * {@code size_t}), value and {@code "|"}; the first field is tagged {@code "Agent"} and holds the
 * agent's name. A blob that does not start so is refused: it is untrusted input.
 *
 * <p>Threads: stateless.
 */
final class NixlMetadata {

  /** The most bytes an agent name may take; names are engine ids, at most 256 characters. */
  static final int MAX_NAME_BYTES = 1024;

  private static final byte[] HEADER = "nixlSerDes|".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] AGENT_TAG = "Agent".getBytes(StandardCharsets.US_ASCII);

  private NixlMetadata() {}

  /**
   * The agent name {@code blob} names.
   *
   * @throws TransportException naming the defect if the blob does not start as NIXL writes one
   */
  static String agentName(byte[] blob) {
    ByteBuffer in = ByteBuffer.wrap(blob).order(ByteOrder.LITTLE_ENDIAN);
    expect(in, HEADER, "it does not start with NIXL's header \"nixlSerDes|\"");
    expect(in, AGENT_TAG, "its first field is not the agent name (tag \"Agent\")");
    if (in.remaining() < Long.BYTES) {
      throw malformed("it ends inside the agent name's length (" + blob.length + " bytes)");
    }
    long length = in.getLong();
    if (length <= 0 || length > MAX_NAME_BYTES) {
      throw malformed(
          "it gives the agent name a length of "
              + Long.toUnsignedString(length)
              + " bytes; expected 1 to "
              + MAX_NAME_BYTES);
    }
    if (in.remaining() < length + 1) {
      throw malformed(
          "it ends inside the agent name ("
              + Long.toUnsignedString(length)
              + " bytes announced, "
              + Math.max(0, in.remaining() - 1)
              + " there)");
    }
    byte[] name = new byte[(int) length];
    in.get(name);
    if (in.get() != '|') {
      throw malformed("the agent name is not followed by the field separator \"|\"");
    }
    try {
      String text =
          StandardCharsets.UTF_8
              .newDecoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT)
              .decode(ByteBuffer.wrap(name))
              .toString();
      if (text.isBlank() || text.indexOf('\0') >= 0) {
        throw malformed("the agent name is blank or holds a NUL character");
      }
      return text;
    } catch (CharacterCodingException e) {
      throw malformed("the agent name is not valid UTF-8");
    }
  }

  private static void expect(ByteBuffer in, byte[] expected, String otherwise) {
    if (in.remaining() < expected.length) {
      throw malformed(otherwise);
    }
    byte[] actual = new byte[expected.length];
    in.get(actual);
    if (!Arrays.equals(actual, expected)) {
      throw malformed(otherwise);
    }
  }

  private static TransportException malformed(String why) {
    return new TransportException(
        "not a NIXL metadata blob: "
            + why
            + "; pass the unmodified blob from the peer's localMetadata()");
  }
}
