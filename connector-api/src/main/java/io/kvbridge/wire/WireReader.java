package io.kvbridge.wire;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.UTFDataFormatException;
import java.util.Arrays;

/**
 * Reads the fields of one untrusted frame, turning every defect (truncation, bad text, oversized
 * field, trailing bytes) into a {@link MalformedMessageException}.
 */
final class WireReader {

  private final DataInputStream in;
  private final int length;

  WireReader(byte[] frame) {
    this.in = new DataInputStream(new ByteArrayInputStream(frame));
    this.length = frame.length;
  }

  /** The magic bytes, then the version byte, which must be {@code version}. */
  void expectMagic(byte[] magic, String what, int version) throws MalformedMessageException {
    byte[] seen = bytes(magic.length);
    if (!Arrays.equals(seen, magic)) {
      throw new MalformedMessageException("not a " + what + " (bad magic)");
    }
    int seenVersion = u8();
    if (seenVersion != version) {
      throw new MalformedMessageException(
          what + " of version " + seenVersion + "; this peer speaks version " + version);
    }
  }

  /** The frame as a {@link java.io.DataInput} from the current position, for nested codecs. */
  java.io.DataInput dataInput() {
    return in;
  }

  /** How many bytes were read so far. */
  int position() {
    try {
      return length - in.available();
    } catch (IOException e) {
      throw new IllegalStateException("reading from memory cannot fail", e);
    }
  }

  int u8() throws MalformedMessageException {
    try {
      return in.readUnsignedByte();
    } catch (IOException e) {
      throw truncated();
    }
  }

  int u16() throws MalformedMessageException {
    try {
      return in.readUnsignedShort();
    } catch (IOException e) {
      throw truncated();
    }
  }

  int i32() throws MalformedMessageException {
    try {
      return in.readInt();
    } catch (IOException e) {
      throw truncated();
    }
  }

  long i64() throws MalformedMessageException {
    try {
      return in.readLong();
    } catch (IOException e) {
      throw truncated();
    }
  }

  /** A text field of at most {@code maxLength} characters, not blank. */
  String text(String field, int maxLength) throws MalformedMessageException {
    String value;
    try {
      value = in.readUTF();
    } catch (UTFDataFormatException e) {
      throw new MalformedMessageException(field + " is not valid text");
    } catch (EOFException e) {
      throw truncated();
    } catch (IOException e) {
      throw new MalformedMessageException(field + ": " + e.getMessage());
    }
    if (value.isBlank() || value.length() > maxLength) {
      throw new MalformedMessageException(
          field + " must be 1 to " + maxLength + " characters, got " + value.length());
    }
    return value;
  }

  /** A length-prefixed byte field of at most {@code maxLength} bytes. */
  byte[] blob(String field, int maxLength) throws MalformedMessageException {
    int size = i32();
    if (size < 0 || size > maxLength) {
      throw new MalformedMessageException(field + " claims " + size + " bytes; limit " + maxLength);
    }
    return bytes(size);
  }

  /** Exactly {@code count} raw bytes. */
  byte[] fixed(int count) throws MalformedMessageException {
    return bytes(count);
  }

  void expectEnd() throws MalformedMessageException {
    try {
      if (in.available() > 0) {
        throw new MalformedMessageException(in.available() + " unexpected trailing bytes");
      }
    } catch (IOException e) {
      throw new MalformedMessageException(e.getMessage());
    }
  }

  private byte[] bytes(int count) throws MalformedMessageException {
    if (count > length) {
      throw truncated();
    }
    byte[] out = new byte[count];
    try {
      in.readFully(out);
    } catch (IOException e) {
      throw truncated();
    }
    return out;
  }

  private static MalformedMessageException truncated() {
    return new MalformedMessageException("truncated");
  }
}
