package io.kvbridge.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.EOFException;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Deque;
import org.junit.jupiter.api.Test;

class HandshakeFramesTest {

  private final Arrivals arrivals = new Arrivals();
  private final HandshakeFrames.Reader reader = new HandshakeFrames.Reader();

  @Test
  void frameIsItsLengthBigEndianThenItsBytes() {
    ByteBuffer frame = HandshakeFrames.encode(new byte[] {9, 8, 7});

    byte[] bytes = new byte[frame.remaining()];
    frame.get(bytes);
    assertThat(bytes).containsExactly(0, 0, 0, 3, 9, 8, 7);
  }

  @Test
  void frameArrivingInPiecesIsCompleteOnlyWithItsLastByte() throws Exception {
    byte[] frame = framed(payload(10));

    arrivals.arrive(Arrays.copyOfRange(frame, 0, 2));
    assertThat(reader.readFrom(arrivals)).isFalse();
    arrivals.arrive(Arrays.copyOfRange(frame, 2, 7));
    assertThat(reader.readFrom(arrivals)).isFalse();
    arrivals.arrive(Arrays.copyOfRange(frame, 7, 11));
    assertThat(reader.readFrom(arrivals)).isFalse();
    arrivals.arrive(Arrays.copyOfRange(frame, 11, frame.length));
    assertThat(reader.readFrom(arrivals)).isTrue();

    assertThat(reader.payload()).isEqualTo(payload(10));
  }

  @Test
  void frameLongerThanTheFirstBufferIsReadWholeOnceItHasArrived() throws Exception {
    arrivals.arrive(framed(payload(100_000)));

    assertThat(reader.readFrom(arrivals)).isTrue();
    assertThat(reader.payload()).isEqualTo(payload(100_000));
  }

  @Test
  void frameOfTheLargestSizeIsRead() throws Exception {
    arrivals.arrive(framed(payload(Handshake.MAX_FRAME_BYTES)));

    assertThat(reader.readFrom(arrivals)).isTrue();
    assertThat(reader.payload()).hasSize(Handshake.MAX_FRAME_BYTES);
  }

  @Test
  void emptyFrameIsCompleteWithItsLength() throws Exception {
    arrivals.arrive(new byte[] {0, 0, 0, 0});

    assertThat(reader.readFrom(arrivals)).isTrue();
    assertThat(reader.payload()).isEmpty();
  }

  @Test
  void frameOneByteOverTheLimitIsRefusedAsSoonAsItsLengthArrives() {
    arrivals.arrive(ByteBuffer.allocate(4).putInt(Handshake.MAX_FRAME_BYTES + 1).array());

    assertThatThrownBy(() -> reader.readFrom(arrivals))
        .isInstanceOf(HandshakeFrames.RefusedFrameException.class)
        .hasMessage(
            "handshake frame of "
                + (Handshake.MAX_FRAME_BYTES + 1)
                + " bytes refused; limit "
                + Handshake.MAX_FRAME_BYTES);
  }

  @Test
  void negativeLengthIsRefusedAndShownAsTheUnsignedNumberSent() {
    arrivals.arrive(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff});

    assertThatThrownBy(() -> reader.readFrom(arrivals))
        .isInstanceOf(HandshakeFrames.RefusedFrameException.class)
        .hasMessageStartingWith("handshake frame of 4294967295 bytes refused");
  }

  @Test
  void peerThatHangsUpInTheLengthEndsTheFrame() throws Exception {
    arrivals.arrive(new byte[] {0, 0});
    assertThat(reader.readFrom(arrivals)).isFalse();

    arrivals.hangUp();

    assertThatThrownBy(() -> reader.readFrom(arrivals))
        .isInstanceOf(EOFException.class)
        .hasMessage("connection closed before a frame was complete");
  }

  @Test
  void peerThatHangsUpInTheBodyEndsTheFrame() throws Exception {
    byte[] frame = framed(payload(10));
    arrivals.arrive(Arrays.copyOf(frame, 8));
    assertThat(reader.readFrom(arrivals)).isFalse();

    arrivals.hangUp();

    assertThatThrownBy(() -> reader.readFrom(arrivals))
        .isInstanceOf(EOFException.class)
        .hasMessage("connection closed before a frame was complete");
  }

  private static byte[] payload(int length) {
    byte[] payload = new byte[length];
    for (int i = 0; i < length; i++) {
      payload[i] = (byte) (i * 7 + 1);
    }
    return payload;
  }

  private static byte[] framed(byte[] payload) {
    return HandshakeFrames.encode(payload).array();
  }

  /**
   * A non-blocking channel as a reader sees it: it hands out what has arrived, then reads nothing
   * until more arrives, and end of stream once the peer has hung up and all was read.
   */
  private static final class Arrivals implements ReadableByteChannel {
    private final Deque<ByteBuffer> arrived = new ArrayDeque<>();
    private boolean hungUp;

    Arrivals arrive(byte[] bytes) {
      arrived.addLast(ByteBuffer.wrap(bytes));
      return this;
    }

    Arrivals hangUp() {
      hungUp = true;
      return this;
    }

    @Override
    public int read(ByteBuffer dst) {
      int read = 0;
      while (dst.hasRemaining() && !arrived.isEmpty()) {
        ByteBuffer next = arrived.peekFirst();
        int n = Math.min(dst.remaining(), next.remaining());
        dst.put(next.slice(next.position(), n));
        next.position(next.position() + n);
        read += n;
        if (!next.hasRemaining()) {
          arrived.pollFirst();
        }
      }
      if (read == 0 && arrived.isEmpty() && hungUp) {
        return -1;
      }
      return read;
    }

    @Override
    public boolean isOpen() {
      return true;
    }

    @Override
    public void close() {}
  }
}
