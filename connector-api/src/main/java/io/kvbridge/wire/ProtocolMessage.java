package io.kvbridge.wire;

import io.kvbridge.integrity.ReadDigest;
import io.kvbridge.lease.LeaseToken;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The pull protocol's notifications between consumer and producer, and their wire form.
 *
 * <p>Wire form: the magic {@code "KVB\1"}, a type byte, then the fields (text as Java modified
 * UTF-8 with a 16-bit length). Decoding accepts nothing else: unknown types, oversized or blank
 * fields, malformed tokens and trailing bytes are refused with {@link MalformedMessageException}.
 */
public sealed interface ProtocolMessage {

  /** The longest notification accepted. */
  int MAX_BYTES = 256 * 1024;

  /** The most leases one heartbeat may renew. */
  int MAX_HEARTBEAT_LEASES = 4096;

  /** The longest id or reason accepted. */
  int MAX_TEXT = 256;

  /**
   * D → P: "I read the blocks of this lease; may I use them?"
   *
   * @param lease the lease and its token
   * @param consumerEngineId the consumer's engine id
   * @param readDigest the {@link ReadDigest} of what D read: P answers NACK, ending nothing, unless
   *     it is the lease's
   */
  record Completion(LeaseRef lease, String consumerEngineId, byte[] readDigest)
      implements ProtocolMessage {
    /** Copies the digest; it must be {@link ReadDigest#BYTES} long. */
    public Completion {
      if (readDigest.length != ReadDigest.BYTES) {
        throw new IllegalArgumentException(
            "a read digest is " + ReadDigest.BYTES + " bytes, got " + readDigest.length);
      }
      readDigest = readDigest.clone();
    }

    @Override
    public byte[] readDigest() {
      return readDigest.clone();
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Completion c
          && lease.equals(c.lease)
          && consumerEngineId.equals(c.consumerEngineId)
          && Arrays.equals(readDigest, c.readDigest);
    }

    @Override
    public int hashCode() {
      return 31 * (31 * lease.hashCode() + consumerEngineId.hashCode())
          + Arrays.hashCode(readDigest);
    }

    @Override
    public String toString() {
      return "Completion[" + lease.requestId() + " from " + consumerEngineId + "]";
    }
  }

  /** P → D: the lease was live when the completion arrived; the read is valid. */
  record Ack(LeaseRef lease) implements ProtocolMessage {}

  /** P → D: the lease was not live; the read must not be used. */
  record Nack(LeaseRef lease, String reason) implements ProtocolMessage {}

  /** D → P: "I still mean to read these; keep them." */
  record Heartbeat(String consumerEngineId, List<LeaseRef> leases) implements ProtocolMessage {
    /** Copies the list. */
    public Heartbeat {
      leases = List.copyOf(leases);
    }
  }

  /** P → D: the leases a heartbeat renewed, with their new deadlines on P's clock. */
  record Renewed(List<Renewal> renewals) implements ProtocolMessage {
    /** Copies the list. */
    public Renewed {
      renewals = List.copyOf(renewals);
    }
  }

  /**
   * One renewed lease.
   *
   * @param lease the lease
   * @param deadlineNanos its deadline after the renewal, on P's clock
   */
  record Renewal(LeaseRef lease, long deadlineNanos) {}

  /** Encodes a message. */
  static byte[] encode(ProtocolMessage message) {
    WireWriter w = new WireWriter().raw(Codec.MAGIC);
    if (message instanceof Completion c) {
      w.u8(Codec.COMPLETION);
      Codec.writeLease(w, c.lease());
      w.text(c.consumerEngineId()).raw(c.readDigest());
    } else if (message instanceof Ack a) {
      w.u8(Codec.ACK);
      Codec.writeLease(w, a.lease());
    } else if (message instanceof Nack n) {
      w.u8(Codec.NACK);
      Codec.writeLease(w, n.lease());
      w.text(Codec.clip(n.reason()));
    } else if (message instanceof Heartbeat h) {
      w.u8(Codec.HEARTBEAT).text(h.consumerEngineId()).u16(h.leases().size());
      h.leases().forEach(l -> Codec.writeLease(w, l));
    } else if (message instanceof Renewed r) {
      w.u8(Codec.RENEWED).u16(r.renewals().size());
      r.renewals()
          .forEach(
              renewal -> {
                Codec.writeLease(w, renewal.lease());
                w.i64(renewal.deadlineNanos());
              });
    }
    return w.toByteArray();
  }

  /** Decodes untrusted bytes. */
  static ProtocolMessage decode(byte[] bytes) throws MalformedMessageException {
    if (bytes.length > MAX_BYTES) {
      throw new MalformedMessageException(bytes.length + " bytes, more than " + MAX_BYTES);
    }
    WireReader r = new WireReader(bytes);
    r.expectMagic(Codec.MAGIC, "kvbridge protocol message");
    int type = r.u8();
    ProtocolMessage message =
        switch (type) {
          case Codec.COMPLETION ->
              new Completion(
                  Codec.readLease(r),
                  r.text("consumer engine id", MAX_TEXT),
                  r.fixed(ReadDigest.BYTES));
          case Codec.ACK -> new Ack(Codec.readLease(r));
          case Codec.NACK -> new Nack(Codec.readLease(r), r.text("reason", MAX_TEXT));
          case Codec.HEARTBEAT -> {
            String consumer = r.text("consumer engine id", MAX_TEXT);
            int count = Codec.count(r);
            List<LeaseRef> leases = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
              leases.add(Codec.readLease(r));
            }
            yield new Heartbeat(consumer, leases);
          }
          case Codec.RENEWED -> {
            int count = Codec.count(r);
            List<Renewal> renewals = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
              renewals.add(new Renewal(Codec.readLease(r), r.i64()));
            }
            yield new Renewed(renewals);
          }
          default -> throw new MalformedMessageException("unknown message type " + type);
        };
    r.expectEnd();
    return message;
  }

  /** Wire constants and field helpers. */
  final class Codec {
    static final byte[] MAGIC = "KVB\u0001".getBytes(StandardCharsets.US_ASCII);
    static final int COMPLETION = 1;
    static final int ACK = 2;
    static final int NACK = 3;
    static final int HEARTBEAT = 4;
    static final int RENEWED = 5;

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

    static int count(WireReader r) throws MalformedMessageException {
      int count = r.u16();
      if (count == 0 || count > MAX_HEARTBEAT_LEASES) {
        throw new MalformedMessageException(
            "a heartbeat or renewal names 1 to " + MAX_HEARTBEAT_LEASES + " leases, got " + count);
      }
      return count;
    }

    static String clip(String text) {
      String value = text == null || text.isBlank() ? "unspecified" : text;
      return value.length() > MAX_TEXT ? value.substring(0, MAX_TEXT) : value;
    }
  }
}
