package io.kvbridge.wire;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;

/** Writes the fields of one frame; the counterpart of {@link WireReader}. */
final class WireWriter {

  private final ByteArrayOutputStream bytes = new ByteArrayOutputStream(128);
  private final DataOutputStream out = new DataOutputStream(bytes);

  WireWriter raw(byte[] value) {
    return run(() -> out.write(value));
  }

  WireWriter u8(int value) {
    return run(() -> out.writeByte(value));
  }

  WireWriter u16(int value) {
    return run(() -> out.writeShort(value));
  }

  WireWriter i32(int value) {
    return run(() -> out.writeInt(value));
  }

  WireWriter i64(long value) {
    return run(() -> out.writeLong(value));
  }

  WireWriter text(String value) {
    return run(() -> out.writeUTF(value));
  }

  WireWriter blob(byte[] value) {
    return run(
        () -> {
          out.writeInt(value.length);
          out.write(value);
        });
  }

  byte[] toByteArray() {
    return bytes.toByteArray();
  }

  private WireWriter run(IoAction action) {
    try {
      action.run();
    } catch (IOException e) {
      throw new UncheckedIOException("writing to memory cannot fail", e);
    }
    return this;
  }

  private interface IoAction {
    void run() throws IOException;
  }
}
