package io.kvbridge.wire;

import io.kvbridge.transfer.MemoryKind;
import java.nio.charset.StandardCharsets;

/**
 * The consumer's first contact with a producer, and its wire form.
 *
 * <p>The consumer sends its engine id, its layout fingerprint and its transport metadata (so the
 * producer can answer with notifications); the producer answers with its transport metadata, the
 * shape and address of its KV region, and a sample of its monotonic clock, or refuses with a reason
 * (e.g. a fingerprint mismatch).
 */
public final class Handshake {

  /** The largest handshake frame accepted (a NIXL metadata blob is a few KiB). */
  public static final int MAX_FRAME_BYTES = 4 * 1024 * 1024;

  private static final byte[] MAGIC = "KVH\u0001".getBytes(StandardCharsets.US_ASCII);
  private static final int REQUEST = 1;
  private static final int ACCEPTED = 2;
  private static final int REFUSED = 3;
  private static final int MAX_TEXT = ProtocolMessage.MAX_TEXT;

  private Handshake() {}

  /**
   * What the consumer sends.
   *
   * @param consumerEngineId the consumer's engine id
   * @param fingerprint the consumer's layout fingerprint
   * @param consumerMetadata the consumer's transport metadata blob
   */
  public record Request(String consumerEngineId, String fingerprint, byte[] consumerMetadata) {}

  /** What the producer answers. */
  public sealed interface Response {}

  /**
   * The producer accepts the consumer.
   *
   * @param producerEngineId the producer's engine id
   * @param producerMetadata the producer's transport metadata blob
   * @param blockCount how many blocks the producer's pool has; block ids are below it
   * @param blockBytes the size of one block
   * @param regionAddress the base address of the producer's KV region
   * @param deviceId the device of the producer's KV region
   * @param memoryKind host or device memory
   * @param clockSampleNanos the producer's monotonic clock when it answered
   */
  public record Accepted(
      String producerEngineId,
      byte[] producerMetadata,
      int blockCount,
      int blockBytes,
      long regionAddress,
      int deviceId,
      MemoryKind memoryKind,
      long clockSampleNanos)
      implements Response {}

  /** The producer refuses the consumer, for {@code reason}. */
  public record Refused(String reason) implements Response {}

  /** Encodes a request. */
  public static byte[] encode(Request request) {
    return new WireWriter()
        .raw(MAGIC)
        .u8(REQUEST)
        .text(request.consumerEngineId())
        .text(request.fingerprint())
        .blob(request.consumerMetadata())
        .toByteArray();
  }

  /** Encodes a response. */
  public static byte[] encode(Response response) {
    WireWriter w = new WireWriter().raw(MAGIC);
    if (response instanceof Accepted a) {
      w.u8(ACCEPTED)
          .text(a.producerEngineId())
          .i32(a.blockCount())
          .i32(a.blockBytes())
          .i64(a.regionAddress())
          .i32(a.deviceId())
          .u8(a.memoryKind().ordinal())
          .i64(a.clockSampleNanos())
          .blob(a.producerMetadata());
    } else if (response instanceof Refused r) {
      w.u8(REFUSED).text(ProtocolMessage.Codec.clip(r.reason()));
    }
    return w.toByteArray();
  }

  /** Decodes an untrusted request. */
  public static Request decodeRequest(byte[] frame) throws MalformedMessageException {
    WireReader r = new WireReader(frame);
    r.expectMagic(MAGIC, "kvbridge handshake");
    if (r.u8() != REQUEST) {
      throw new MalformedMessageException("expected a handshake request");
    }
    Request request =
        new Request(
            r.text("consumer engine id", MAX_TEXT),
            r.text("fingerprint", MAX_TEXT),
            r.blob("consumer metadata", MAX_FRAME_BYTES));
    r.expectEnd();
    return request;
  }

  /** Decodes an untrusted response. */
  public static Response decodeResponse(byte[] frame) throws MalformedMessageException {
    WireReader r = new WireReader(frame);
    r.expectMagic(MAGIC, "kvbridge handshake");
    int type = r.u8();
    Response response;
    if (type == ACCEPTED) {
      String engineId = r.text("producer engine id", MAX_TEXT);
      int blockCount = r.i32();
      int blockBytes = r.i32();
      long address = r.i64();
      int deviceId = r.i32();
      int kind = r.u8();
      long clock = r.i64();
      byte[] metadata = r.blob("producer metadata", MAX_FRAME_BYTES);
      if (blockCount <= 0 || blockBytes <= 0 || deviceId < 0) {
        throw new MalformedMessageException(
            "layout must be positive: blocks="
                + blockCount
                + ", bytes="
                + blockBytes
                + ", device="
                + deviceId);
      }
      if (kind >= MemoryKind.values().length) {
        throw new MalformedMessageException("unknown memory kind " + kind);
      }
      response =
          new Accepted(
              engineId,
              metadata,
              blockCount,
              blockBytes,
              address,
              deviceId,
              MemoryKind.values()[kind],
              clock);
    } else if (type == REFUSED) {
      response = new Refused(r.text("reason", MAX_TEXT));
    } else {
      throw new MalformedMessageException("expected a handshake response, got type " + type);
    }
    r.expectEnd();
    return response;
  }
}
