package io.kvbridge.wire;

import io.kvbridge.net.HandshakeAddress;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;
import java.util.Arrays;

/**
 * The handshake's wire frame: a u32 big-endian length, then that many bytes, at most {@link
 * Handshake#MAX_FRAME_BYTES}. Both ends of {@link TcpHandshakeChannel} read and write frames
 * through here.
 */
final class HandshakeFrames {

  private HandshakeFrames() {}

  /** {@code payload} framed, ready to be written. */
  static ByteBuffer encode(byte[] payload) {
    ByteBuffer frame = ByteBuffer.allocate(Integer.BYTES + payload.length);
    frame.putInt(payload.length).put(payload).flip();
    return frame;
  }

  /**
   * The consumer's side of a conversation with {@code address} has more to send after {@link
   * HandshakeChannel#MAX_ROUNDS} frames.
   */
  static IOException tooManyRounds(HandshakeAddress address) {
    return new IOException(
        "the consumer's side of the conversation with "
            + address
            + " sent more than "
            + HandshakeChannel.MAX_ROUNDS
            + " frames");
  }

  /** The announced length was negative or over the limit. */
  static final class RefusedFrameException extends IOException {
    private static final long serialVersionUID = 1L;

    RefusedFrameException(long length) {
      super("handshake frame of " + length + " bytes refused; limit " + Handshake.MAX_FRAME_BYTES);
    }
  }

  /**
   * Reads one frame from a non-blocking channel across as many calls as the peer needs. Memory
   * grows with the bytes that arrived, not with the length announced, so a peer that announces 4
   * MiB and sends nothing holds little.
   *
   * <p>Not thread-safe: one thread at a time.
   */
  static final class Reader {
    private static final int FIRST_CHUNK = 16 * 1024;

    private final ByteBuffer header = ByteBuffer.allocate(Integer.BYTES);
    private byte[] body;
    private int filled;
    private int length = -1;

    /**
     * Reads whatever {@code channel} has now.
     *
     * @return whether the frame is complete
     * @throws RefusedFrameException if the announced length is negative or over the limit
     * @throws EOFException if the peer closed before the frame was complete
     */
    boolean readFrom(ReadableByteChannel channel) throws IOException {
      if (length < 0) {
        if (channel.read(header) < 0) {
          throw new EOFException("connection closed before a frame was complete");
        }
        if (header.hasRemaining()) {
          return false;
        }
        int announced = header.getInt(0);
        if (announced < 0 || announced > Handshake.MAX_FRAME_BYTES) {
          throw new RefusedFrameException(Integer.toUnsignedLong(announced));
        }
        length = announced;
        body = new byte[Math.min(length, FIRST_CHUNK)];
      }
      while (filled < length) {
        if (filled == body.length) {
          body = Arrays.copyOf(body, (int) Math.min(length, 2L * body.length));
        }
        int read = channel.read(ByteBuffer.wrap(body, filled, body.length - filled));
        if (read < 0) {
          throw new EOFException("connection closed before a frame was complete");
        }
        if (read == 0) {
          return false;
        }
        filled += read;
      }
      return true;
    }

    /** The complete frame's payload; only after {@link #readFrom} returned true. */
    byte[] payload() {
      return body;
    }
  }
}
