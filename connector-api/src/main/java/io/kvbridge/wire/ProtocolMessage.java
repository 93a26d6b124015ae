package io.kvbridge.wire;

import io.kvbridge.integrity.ReadDigest;
import io.kvbridge.lease.LeaseToken;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The pull protocol's notifications between consumer (D) and producer (P), and their wire form,
 * specified field by field in {@code docs/protocol.md}.
 *
 * <p>Wire form: the magic {@code "KVB"} and the version byte {@value #VERSION}, a type byte, then
 * the fields: integers big-endian, text as a u16 length and Java's modified UTF-8 (1 to {@value
 * #MAX_TEXT} characters, not blank), digests as their raw bytes. Decoding accepts nothing else:
 * another version, unknown types, oversized or blank fields, malformed tokens and trailing bytes
 * are refused with {@link MalformedMessageException}.
 *
 * <p>Clock fields are a node's own monotonic clock in nanoseconds: {@code sentAtNanos} is D's, sent
 * so P can echo it; {@code producerClockNanos} and deadlines are P's. D converts P's times to its
 * own clock with the offset it estimates from those echoes.
 */
public sealed interface ProtocolMessage {

  /**
   * Hands this message to {@code router}'s side for its direction: {@link ToProducer} or {@link
   * ToConsumer}.
   */
  void route(Router router);

  /** A message's kind as metrics name it: its type in lower case, e.g. {@code completion}. */
  default String kind() {
    return getClass().getSimpleName().toLowerCase(Locale.ROOT);
  }

  /** Takes a message by its direction. */
  interface Router {
    /** Takes a message a consumer sent to a producer. */
    void toProducer(ToProducer message);

    /** Takes a message a producer sent to a consumer. */
    void toConsumer(ToConsumer message);
  }

  /**
   * A message D sends and P handles: {@link Completion}, {@link Heartbeat}, {@link Confirm} or
   * {@link Release}.
   */
  sealed interface ToProducer extends ProtocolMessage {
    @Override
    default void route(Router router) {
      router.toProducer(this);
    }

    /** Hands this message to {@code handler}'s method for its type. */
    void handleBy(Handler handler);

    /** Handles each type of message a producer receives. */
    interface Handler {
      void completion(Completion completion);

      void heartbeat(Heartbeat heartbeat);

      void confirm(Confirm confirm);

      void release(Release release);
    }
  }

  /**
   * A message P sends and D handles: {@link Ack}, {@link Nack}, {@link Renewed}, {@link Confirmed}
   * or {@link Layers}.
   */
  sealed interface ToConsumer extends ProtocolMessage {
    @Override
    default void route(Router router) {
      router.toConsumer(this);
    }

    /** Hands this message to {@code handler}'s method for its type. */
    void handleBy(Handler handler);

    /** Handles each type of message a consumer receives. */
    interface Handler {
      void ack(Ack ack);

      void nack(Nack nack);

      void renewed(Renewed renewed);

      void confirmed(Confirmed confirmed);

      void layers(Layers layers);
    }
  }

  /** A message about one lease, which it names with its token. */
  sealed interface LeaseMessage extends ProtocolMessage {
    /** The lease and its token. */
    LeaseRef lease();
  }

  /** The protocol version this code speaks; a message of another version is refused. */
  int VERSION = 6;

  /** The longest notification accepted. */
  int MAX_BYTES = 256 * 1024;

  /** The most leases one heartbeat may renew. */
  int MAX_HEARTBEAT_LEASES = 4096;

  /** The longest id or reason accepted. */
  int MAX_TEXT = 256;

  /** The most layers a model may have, and so the highest layer a {@link Layers} may name. */
  int MAX_LAYERS = 65_535;

  /** The most producer ranks a {@link Layers} may name. */
  int MAX_RANKS = 255;

  /** The most blocks a {@link Layers} may name. */
  int MAX_BLOCKS = 65_536;

  /**
   * D → P: "I read the blocks of this lease; may I use them?" P answers {@link Ack} (the lease ends
   * as READ) or {@link Nack}.
   *
   * @param lease the lease and its token
   * @param consumerEngineId the consumer's engine id
   * @param readDigest the digest of what D read; P refuses, ending nothing, unless it is the
   *     lease's
   * @param skipTokens the tokens D did not read because it held them already
   */
  record Completion(LeaseRef lease, String consumerEngineId, ReadDigest readDigest, int skipTokens)
      implements ToProducer, LeaseMessage {
    @Override
    public void handleBy(ToProducer.Handler handler) {
      handler.completion(this);
    }
  }

  /** P → D: the lease was live and the read digest its own when the completion arrived. */
  record Ack(LeaseRef lease) implements ToConsumer, LeaseMessage {
    @Override
    public void handleBy(ToConsumer.Handler handler) {
      handler.ack(this);
    }
  }

  /**
   * P → D: the read or the confirmation must not be used.
   *
   * @param lease the lease named by the refused message
   * @param reason why, e.g. {@code WRONG_BLOCKS} or {@code EXPIRED}
   */
  record Nack(LeaseRef lease, String reason) implements ToConsumer, LeaseMessage {

    /** The reason of a completion of a streamed lease before its last layer was announced. */
    public static final String LAYERS_MISSING = "LAYERS_MISSING";

    /**
     * The reason P gives, unasked, to the consumer of a streamed lease it revoked while it still
     * computed (the request was aborted, or P shuts down): the layers not announced never come.
     */
    public static final String REVOKED = "REVOKED";

    @Override
    public void handleBy(ToConsumer.Handler handler) {
      handler.nack(this);
    }
  }

  /**
   * D → P: "I still mean to read these; keep them." P answers {@link Renewed} for those it renewed.
   *
   * @param consumerEngineId the consumer's engine id
   * @param sentAtNanos D's clock when it sent this, echoed by P
   * @param leases the leases to renew, 1 to {@value #MAX_HEARTBEAT_LEASES}
   */
  record Heartbeat(String consumerEngineId, long sentAtNanos, List<LeaseRef> leases)
      implements ToProducer {
    /** Copies the list. */
    public Heartbeat {
      leases = List.copyOf(leases);
    }

    @Override
    public void handleBy(ToProducer.Handler handler) {
      handler.heartbeat(this);
    }
  }

  /**
   * P → D: the leases a heartbeat renewed, with their new deadlines.
   *
   * @param echoSentAtNanos the heartbeat's {@code sentAtNanos}
   * @param producerClockNanos P's clock when it answered
   * @param renewals the renewed leases, 1 to {@value #MAX_HEARTBEAT_LEASES}
   */
  record Renewed(long echoSentAtNanos, long producerClockNanos, List<Renewal> renewals)
      implements ToConsumer {
    /** Copies the list. */
    public Renewed {
      renewals = List.copyOf(renewals);
    }

    @Override
    public void handleBy(ToConsumer.Handler handler) {
      handler.renewed(this);
    }
  }

  /**
   * One renewed lease.
   *
   * @param lease the lease
   * @param deadlineNanos its deadline after the renewal, on P's clock
   */
  record Renewal(LeaseRef lease, long deadlineNanos) {}

  /**
   * D → P, before D commits any block to a load: "does this lease exist, for exactly these blocks
   * and this prompt?" P renews the lease as a heartbeat would and answers {@link Confirmed}, or
   * {@link Nack}.
   *
   * @param lease the lease and its token
   * @param consumerEngineId the consumer's engine id
   * @param readDigest the digest of the read D means to do
   * @param skipTokens the tokens D will not read because it holds them already
   * @param sentAtNanos D's clock when it sent this, echoed by P
   */
  record Confirm(
      LeaseRef lease,
      String consumerEngineId,
      ReadDigest readDigest,
      int skipTokens,
      long sentAtNanos)
      implements ToProducer, LeaseMessage {
    @Override
    public void handleBy(ToProducer.Handler handler) {
      handler.confirm(this);
    }
  }

  /**
   * P → D: the lease exists and matches; it now ends at {@code deadlineNanos}.
   *
   * @param lease the lease
   * @param deadlineNanos its deadline, on P's clock
   * @param echoSentAtNanos the confirm's {@code sentAtNanos}
   * @param producerClockNanos P's clock when it answered
   */
  record Confirmed(
      LeaseRef lease, long deadlineNanos, long echoSentAtNanos, long producerClockNanos)
      implements ToConsumer, LeaseMessage {
    @Override
    public void handleBy(ToConsumer.Handler handler) {
      handler.confirmed(this);
    }
  }

  /**
   * D → P: "I will not read this lease; free its blocks now." Sent when a request is aborted or
   * finished on D before its load completed, or when D has every block locally. The lease ends as
   * RELEASED; no answer.
   *
   * @param lease the lease and its token
   * @param consumerEngineId the consumer's engine id
   * @param reason why, for P's log
   */
  record Release(LeaseRef lease, String consumerEngineId, String reason)
      implements ToProducer, LeaseMessage {
    @Override
    public void handleBy(ToProducer.Handler handler) {
      handler.release(this);
    }
  }

  /**
   * P → D, for a lease P streams while it still computes: the layers {@code [fromLayer, toLayer)}
   * of every block of the lease are computed on every rank, and will not change while the lease
   * lives; D may read them. Sent to the consumer that confirmed the lease, in order: the first
   * names layer 0, each next one starts where the last ended, and the last one ends at the model's
   * last layer. D refuses (and counts) a message that names layers it was told of already, that
   * skips some, or that goes beyond the model's layers.
   *
   * @param lease the lease and its token
   * @param fromLayer the first layer announced
   * @param toLayer the layer after the last one announced
   * @param checksums by producer rank, then by layer of the range, then by block of the lease (in
   *     the order of its {@code block_ids}): the checksum of the block's used bytes of that layer
   *     on that rank, in memory order
   */
  record Layers(LeaseRef lease, int fromLayer, int toLayer, List<List<List<Integer>>> checksums)
      implements ToConsumer, LeaseMessage {

    /** Copies the checksums; refuses a range or a shape the wire cannot carry. */
    public Layers {
      if (fromLayer < 0 || toLayer <= fromLayer || toLayer > MAX_LAYERS) {
        throw new IllegalArgumentException(
            "layers ["
                + fromLayer
                + ", "
                + toLayer
                + ") must be a range within 0 to "
                + MAX_LAYERS);
      }
      int layers = toLayer - fromLayer;
      if (checksums.isEmpty()
          || checksums.size() > MAX_RANKS
          || checksums.stream().anyMatch(rank -> rank.size() != layers)) {
        throw new IllegalArgumentException(
            "checksums must hold, for each of 1 to " + MAX_RANKS + " ranks, one list per layer");
      }
      int blocks = checksums.get(0).get(0).size();
      if (blocks == 0
          || blocks > MAX_BLOCKS
          || checksums.stream().flatMap(List::stream).anyMatch(layer -> layer.size() != blocks)) {
        throw new IllegalArgumentException(
            "checksums must hold 1 to " + MAX_BLOCKS + " blocks, as many in every layer");
      }
      checksums =
          checksums.stream()
              .<List<List<Integer>>>map(
                  rank -> rank.stream().<List<Integer>>map(List::copyOf).toList())
              .toList();
    }

    /**
     * At most the encoded size of a message of this shape, in bytes, for {@code requestId}: for
     * splitting an announcement into messages that each fit {@link #MAX_BYTES}.
     */
    public static int encodedBytes(String requestId, int ranks, int layers, int blocks) {
      return Codec.MAGIC.length
          + 2
          + 4
          + requestId.length() * 3
          + LeaseToken.HEX_LENGTH
          + 2
          + 2
          + 1
          + 4
          + 4 * ranks * layers * blocks;
    }

    @Override
    public void handleBy(ToConsumer.Handler handler) {
      handler.layers(this);
    }
  }

  /** Encodes a message. */
  static byte[] encode(ProtocolMessage message) {
    WireWriter w = new WireWriter().raw(Codec.MAGIC).u8(VERSION);
    if (message instanceof Completion c) {
      w.u8(Codec.COMPLETION);
      Codec.writeLease(w, c.lease());
      w.text(c.consumerEngineId()).raw(c.readDigest().toBytes()).i32(c.skipTokens());
    } else if (message instanceof Ack a) {
      w.u8(Codec.ACK);
      Codec.writeLease(w, a.lease());
    } else if (message instanceof Nack n) {
      w.u8(Codec.NACK);
      Codec.writeLease(w, n.lease());
      w.text(Codec.clip(n.reason()));
    } else if (message instanceof Heartbeat h) {
      w.u8(Codec.HEARTBEAT).text(h.consumerEngineId()).i64(h.sentAtNanos()).u16(h.leases().size());
      h.leases().forEach(l -> Codec.writeLease(w, l));
    } else if (message instanceof Renewed r) {
      w.u8(Codec.RENEWED)
          .i64(r.echoSentAtNanos())
          .i64(r.producerClockNanos())
          .u16(r.renewals().size());
      r.renewals()
          .forEach(
              renewal -> {
                Codec.writeLease(w, renewal.lease());
                w.i64(renewal.deadlineNanos());
              });
    } else if (message instanceof Confirm c) {
      w.u8(Codec.CONFIRM);
      Codec.writeLease(w, c.lease());
      w.text(c.consumerEngineId())
          .raw(c.readDigest().toBytes())
          .i32(c.skipTokens())
          .i64(c.sentAtNanos());
    } else if (message instanceof Confirmed c) {
      w.u8(Codec.CONFIRMED);
      Codec.writeLease(w, c.lease());
      w.i64(c.deadlineNanos()).i64(c.echoSentAtNanos()).i64(c.producerClockNanos());
    } else if (message instanceof Release r) {
      w.u8(Codec.RELEASE);
      Codec.writeLease(w, r.lease());
      w.text(r.consumerEngineId()).text(Codec.clip(r.reason()));
    } else if (message instanceof Layers l) {
      w.u8(Codec.LAYERS);
      Codec.writeLease(w, l.lease());
      w.u16(l.fromLayer())
          .u16(l.toLayer())
          .u8(l.checksums().size())
          .i32(l.checksums().get(0).get(0).size());
      l.checksums().forEach(rank -> rank.forEach(layer -> layer.forEach(w::i32)));
    }
    return w.toByteArray();
  }

  /** Decodes untrusted bytes. */
  static ProtocolMessage decode(byte[] bytes) throws MalformedMessageException {
    if (bytes.length > MAX_BYTES) {
      throw new MalformedMessageException(bytes.length + " bytes, more than " + MAX_BYTES);
    }
    WireReader r = new WireReader(bytes);
    r.expectMagic(Codec.MAGIC, "kvbridge protocol message", VERSION);
    int type = r.u8();
    ProtocolMessage message =
        switch (type) {
          case Codec.COMPLETION ->
              new Completion(
                  Codec.readLease(r),
                  r.text("consumer engine id", MAX_TEXT),
                  Codec.readDigest(r),
                  Codec.skip(r));
          case Codec.ACK -> new Ack(Codec.readLease(r));
          case Codec.NACK -> new Nack(Codec.readLease(r), r.text("reason", MAX_TEXT));
          case Codec.HEARTBEAT -> {
            String consumer = r.text("consumer engine id", MAX_TEXT);
            long sentAt = r.i64();
            int count = Codec.count(r);
            List<LeaseRef> leases = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
              leases.add(Codec.readLease(r));
            }
            yield new Heartbeat(consumer, sentAt, leases);
          }
          case Codec.RENEWED -> {
            long echo = r.i64();
            long clock = r.i64();
            int count = Codec.count(r);
            List<Renewal> renewals = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
              renewals.add(new Renewal(Codec.readLease(r), r.i64()));
            }
            yield new Renewed(echo, clock, renewals);
          }
          case Codec.CONFIRM ->
              new Confirm(
                  Codec.readLease(r),
                  r.text("consumer engine id", MAX_TEXT),
                  Codec.readDigest(r),
                  Codec.skip(r),
                  r.i64());
          case Codec.CONFIRMED -> new Confirmed(Codec.readLease(r), r.i64(), r.i64(), r.i64());
          case Codec.RELEASE ->
              new Release(
                  Codec.readLease(r),
                  r.text("consumer engine id", MAX_TEXT),
                  r.text("reason", MAX_TEXT));
          case Codec.LAYERS -> Codec.readLayers(r);
          default -> throw new MalformedMessageException("unknown message type " + type);
        };
    r.expectEnd();
    return message;
  }

  /** Wire constants and field helpers. */
  final class Codec {
    static final byte[] MAGIC = "KVB".getBytes(StandardCharsets.US_ASCII);
    static final int COMPLETION = 1;
    static final int ACK = 2;
    static final int NACK = 3;
    static final int HEARTBEAT = 4;
    static final int RENEWED = 5;
    static final int CONFIRM = 6;
    static final int CONFIRMED = 7;
    static final int RELEASE = 8;
    static final int LAYERS = 9;

    private Codec() {}

    static void writeLease(WireWriter w, LeaseRef lease) {
      w.text(lease.requestId()).text(lease.token());
    }

    static LeaseRef readLease(WireReader r) throws MalformedMessageException {
      String requestId = r.text("request id", MAX_TEXT);
      String token = r.text("lease token", MAX_TEXT);
      if (!LeaseToken.isWellFormed(token)) {
        throw new MalformedMessageException("lease token is not 32 lowercase hex digits");
      }
      return new LeaseRef(requestId, token);
    }

    static ReadDigest readDigest(WireReader r) throws MalformedMessageException {
      return ReadDigest.fromBytes(r.fixed(ReadDigest.BYTES));
    }

    static int skip(WireReader r) throws MalformedMessageException {
      int skip = r.i32();
      if (skip < 0) {
        throw new MalformedMessageException("skipped tokens must be at least 0, got " + skip);
      }
      return skip;
    }

    static int count(WireReader r) throws MalformedMessageException {
      int count = r.u16();
      if (count == 0 || count > MAX_HEARTBEAT_LEASES) {
        throw new MalformedMessageException(
            "a heartbeat or renewal names 1 to " + MAX_HEARTBEAT_LEASES + " leases, got " + count);
      }
      return count;
    }

    static Layers readLayers(WireReader r) throws MalformedMessageException {
      LeaseRef lease = readLease(r);
      int from = r.u16();
      int to = r.u16();
      if (to <= from) {
        throw new MalformedMessageException(
            "layers [" + from + ", " + to + ") name no layer: the end must follow the start");
      }
      int ranks = r.u8();
      int blocks = r.i32();
      if (ranks == 0) {
        throw new MalformedMessageException("layers of 0 ranks; at least 1");
      }
      if (blocks <= 0 || blocks > MAX_BLOCKS) {
        throw new MalformedMessageException(
            "layers of " + blocks + " blocks; 1 to " + MAX_BLOCKS + " are accepted");
      }
      List<List<List<Integer>>> checksums = new ArrayList<>(ranks);
      for (int q = 0; q < ranks; q++) {
        List<List<Integer>> layers = new ArrayList<>(to - from);
        for (int l = from; l < to; l++) {
          List<Integer> values = new ArrayList<>(blocks);
          for (int b = 0; b < blocks; b++) {
            values.add(r.i32());
          }
          layers.add(values);
        }
        checksums.add(layers);
      }
      return new Layers(lease, from, to, checksums);
    }

    static String clip(String text) {
      String value = text == null || text.isBlank() ? "unspecified" : text;
      return value.length() > MAX_TEXT ? value.substring(0, MAX_TEXT) : value;
    }
  }
}
