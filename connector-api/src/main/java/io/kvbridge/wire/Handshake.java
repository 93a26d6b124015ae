package io.kvbridge.wire;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.transfer.MemoryKind;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;

/**
 * The consumer's first contact with a producer, and its wire form, specified field by field in
 * {@code docs/protocol.md}. One conversation over a {@link HandshakeChannel}, opened by P's {@link
 * Greeting} (a fresh nonce, and whether P requires the deployment's secret):
 *
 * <ul>
 *   <li>without a secret, three frames: the greeting; D's {@link Request} (its engine id,
 *       incarnation, the layouts of its ranks and its lead rank's transport metadata); P's {@link
 *       Accepted} (its engine id, incarnation, a clock sample and, per rank, layout, region
 *       addresses and transport metadata) or {@link Refused};
 *   <li>with a secret, five: the greeting; D's {@link Challenge} (its own fresh nonce and nothing
 *       else); P's {@link Proof} that it knows the secret, bound to both nonces; then the request
 *       and the answer, each {@linkplain #sealed sealed} with AES-256-GCM under a key of its own
 *       derived from the secret and both nonces ({@link HandshakeKeys}). D sends nothing of its own
 *       before P proved the secret, and a relay, a replay or a reflection learns or achieves
 *       nothing.
 * </ul>
 *
 * <p>{@link ProducerHandshake} and {@link ConsumerHandshake} hold the two sides of a conversation;
 * this class only encodes and decodes frames.
 */
public final class Handshake {

  /** The handshake version this code speaks; a frame of another version is refused. */
  public static final int VERSION = 6;

  /** The largest handshake frame accepted (a NIXL metadata blob is a few KiB). */
  public static final int MAX_FRAME_BYTES = 4 * 1024 * 1024;

  /** The most tensor-parallel ranks an engine may have. */
  public static final int MAX_RANKS = 255;

  /** The size of a nonce in bytes. */
  public static final int NONCE_BYTES = 16;

  private static final byte[] MAGIC = "KVH".getBytes(StandardCharsets.US_ASCII);
  private static final int REQUEST = 1;
  private static final int ACCEPTED = 2;
  private static final int REFUSED = 3;
  private static final int GREETING = 4;
  private static final int CHALLENGE = 5;
  private static final int PROOF = 6;
  private static final int SEALED = 7;
  private static final int AUTHENTICATION_REQUIRED = 1;
  private static final int MAX_TEXT = ProtocolMessage.MAX_TEXT;
  private static final SecureRandom RANDOM = new SecureRandom();

  private Handshake() {}

  /**
   * P's first frame.
   *
   * @param nonce {@value #NONCE_BYTES} fresh random bytes
   * @param authenticationRequired whether P requires the request to prove the secret
   */
  public record Greeting(byte[] nonce, boolean authenticationRequired) {
    /** Copies the nonce; it must be {@value #NONCE_BYTES} bytes. */
    public Greeting {
      nonce = checkedNonce(nonce);
    }

    /** A greeting with a fresh random nonce. */
    public static Greeting fresh(boolean authenticationRequired) {
      return new Greeting(randomNonce(), authenticationRequired);
    }

    @Override
    public byte[] nonce() {
      return nonce.clone();
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Greeting g
          && Arrays.equals(nonce, g.nonce)
          && authenticationRequired == g.authenticationRequired;
    }

    @Override
    public int hashCode() {
      return 31 * Arrays.hashCode(nonce) + Boolean.hashCode(authenticationRequired);
    }

    @Override
    public String toString() {
      return "Greeting["
          + HexFormat.of().formatHex(nonce)
          + ", auth="
          + authenticationRequired
          + "]";
    }
  }

  /**
   * What the consumer sends.
   *
   * @param consumerEngineId the consumer's engine id
   * @param consumerIncarnation the consumer's incarnation: drawn at every start, so a restarted
   *     engine of the same id is told apart from its former self
   * @param consumerRanks the layouts of the consumer's tensor-parallel ranks, by rank (1 to 255)
   * @param consumerMetadata the transport metadata of the consumer's lead rank (0), so P can send
   *     it notifications
   */
  public record Request(
      String consumerEngineId,
      long consumerIncarnation,
      List<KvLayout> consumerRanks,
      byte[] consumerMetadata) {
    /** Copies the array and the list. */
    public Request {
      consumerRanks = checkedRanks(consumerRanks);
      consumerMetadata = consumerMetadata.clone();
    }

    @Override
    public byte[] consumerMetadata() {
      return consumerMetadata.clone();
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Request r
          && consumerEngineId.equals(r.consumerEngineId)
          && consumerIncarnation == r.consumerIncarnation
          && consumerRanks.equals(r.consumerRanks)
          && Arrays.equals(consumerMetadata, r.consumerMetadata);
    }

    @Override
    public int hashCode() {
      return consumerEngineId.hashCode() * 31 + Long.hashCode(consumerIncarnation);
    }

    @Override
    public String toString() {
      return "Request[" + consumerEngineId + "#" + Long.toHexString(consumerIncarnation) + "]";
    }
  }

  /**
   * D's answer to a greeting that requires the secret: a fresh nonce of D's, and nothing else of
   * D's until P proved the secret.
   *
   * @param nonce {@value #NONCE_BYTES} fresh random bytes
   */
  public record Challenge(byte[] nonce) {
    /** Copies the nonce; it must be {@value #NONCE_BYTES} bytes. */
    public Challenge {
      nonce = checkedNonce(nonce);
    }

    /** A challenge with a fresh random nonce. */
    public static Challenge fresh() {
      return new Challenge(randomNonce());
    }

    @Override
    public byte[] nonce() {
      return nonce.clone();
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Challenge c && Arrays.equals(nonce, c.nonce);
    }

    @Override
    public int hashCode() {
      return Arrays.hashCode(nonce);
    }

    @Override
    public String toString() {
      return "Challenge[" + HexFormat.of().formatHex(nonce) + "]";
    }
  }

  /** What the producer answers. */
  public sealed interface Response {}

  /**
   * The producer accepts the consumer.
   *
   * @param producerEngineId the producer's engine id
   * @param producerIncarnation the producer's incarnation
   * @param clockSampleNanos the producer's monotonic clock when it answered
   * @param ranks the producer's tensor-parallel ranks, by rank (1 to 255)
   */
  public record Accepted(
      String producerEngineId, long producerIncarnation, long clockSampleNanos, List<Rank> ranks)
      implements Response {
    /** Copies the list; at least one rank. */
    public Accepted {
      ranks = List.copyOf(ranks);
      if (ranks.isEmpty() || ranks.size() > MAX_RANKS) {
        throw new IllegalArgumentException(
            "a producer has 1 to " + MAX_RANKS + " ranks, got " + ranks.size());
      }
    }

    @Override
    public String toString() {
      return "Accepted[" + producerEngineId + "#" + Long.toHexString(producerIncarnation) + "]";
    }
  }

  /**
   * One of the producer's ranks: where its KV lives and how to reach it.
   *
   * @param layout the rank's layout: which heads, how many blocks (block ids are below {@code
   *     blockCount}), of what size
   * @param regionAddresses the base addresses of the rank's registered KV regions, in region order:
   *     as many as its layout has ({@link KvLayout#regions()})
   * @param deviceId the device of the regions
   * @param memoryKind host or device memory
   * @param metadata the rank's transport metadata blob
   */
  public record Rank(
      KvLayout layout,
      List<Long> regionAddresses,
      int deviceId,
      MemoryKind memoryKind,
      byte[] metadata) {
    /** Copies the addresses and the metadata. */
    public Rank {
      regionAddresses = List.copyOf(regionAddresses);
      if (regionAddresses.size() != layout.regions()) {
        throw new IllegalArgumentException(
            "the layout has "
                + layout.regions()
                + " region(s), got "
                + regionAddresses.size()
                + " addresses");
      }
      if (deviceId < 0) {
        throw new IllegalArgumentException("a device id is at least 0, got " + deviceId);
      }
      metadata = metadata.clone();
    }

    @Override
    public byte[] metadata() {
      return metadata.clone();
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Rank r
          && layout.equals(r.layout)
          && regionAddresses.equals(r.regionAddresses)
          && deviceId == r.deviceId
          && memoryKind == r.memoryKind
          && Arrays.equals(metadata, r.metadata);
    }

    @Override
    public int hashCode() {
      return layout.hashCode() * 31 + regionAddresses.hashCode();
    }

    @Override
    public String toString() {
      return "Rank[heads "
          + layout.headStart()
          + "+"
          + layout.headCount()
          + " at 0x"
          + Long.toHexString(regionAddresses.get(0))
          + (regionAddresses.size() > 1 ? " and " + (regionAddresses.size() - 1) + " more" : "")
          + "]";
    }
  }

  /** The producer refuses the consumer, for {@code reason}. */
  public record Refused(String reason) implements Response {}

  /** {@value #NONCE_BYTES} fresh random bytes. */
  public static byte[] randomNonce() {
    byte[] nonce = new byte[NONCE_BYTES];
    RANDOM.nextBytes(nonce);
    return nonce;
  }

  /** Encodes a greeting. */
  public static byte[] encode(Greeting greeting) {
    return header(GREETING)
        .raw(greeting.nonce)
        .u8(greeting.authenticationRequired() ? AUTHENTICATION_REQUIRED : 0)
        .toByteArray();
  }

  /** Decodes an untrusted greeting. */
  public static Greeting decodeGreeting(byte[] frame) throws MalformedMessageException {
    WireReader r = expect(frame, GREETING, "a handshake greeting");
    byte[] nonce = r.fixed(NONCE_BYTES);
    int flags = r.u8();
    if ((flags & ~AUTHENTICATION_REQUIRED) != 0) {
      throw new MalformedMessageException("unknown greeting flags " + flags);
    }
    r.expectEnd();
    return new Greeting(nonce, flags == AUTHENTICATION_REQUIRED);
  }

  /** Encodes a challenge. */
  public static byte[] encode(Challenge challenge) {
    return header(CHALLENGE).raw(challenge.nonce).toByteArray();
  }

  /** Decodes an untrusted challenge. */
  public static Challenge decodeChallenge(byte[] frame) throws MalformedMessageException {
    WireReader r = expect(frame, CHALLENGE, "a handshake challenge");
    byte[] nonce = r.fixed(NONCE_BYTES);
    r.expectEnd();
    return new Challenge(nonce);
  }

  /** Encodes P's proof of the secret: the {@value HandshakeKeys#PROOF_BYTES}-byte tag. */
  public static byte[] encodeProof(byte[] tag) {
    return header(PROOF).raw(tag).toByteArray();
  }

  /** The tag of an untrusted proof frame. */
  public static byte[] decodeProof(byte[] frame) throws MalformedMessageException {
    WireReader r = expect(frame, PROOF, "a handshake proof");
    byte[] tag = r.fixed(HandshakeKeys.PROOF_BYTES);
    r.expectEnd();
    return tag;
  }

  /** The header of a sealed frame, which is also its AES-GCM associated data. */
  static byte[] sealedHeader() {
    return header(SEALED).toByteArray();
  }

  /** Whether {@code frame} is a sealed frame of this version (its content not yet checked). */
  static boolean isSealed(byte[] frame) {
    return hasHeader(frame, SEALED);
  }

  /** Whether {@code frame} is a request of this version (its content not yet checked). */
  static boolean isRequest(byte[] frame) {
    return hasHeader(frame, REQUEST);
  }

  /** Whether {@code frame} is a refusal of this version (its content not yet checked). */
  static boolean isRefused(byte[] frame) {
    return hasHeader(frame, REFUSED);
  }

  /** Encodes a request. */
  public static byte[] encode(Request request) {
    WireWriter w =
        header(REQUEST)
            .text(request.consumerEngineId())
            .i64(request.consumerIncarnation())
            .u8(request.consumerRanks().size());
    request.consumerRanks().forEach(l -> w.raw(l.encode()));
    return w.blob(request.consumerMetadata).toByteArray();
  }

  /** Decodes an untrusted request. */
  public static Request decodeRequest(byte[] frame) throws MalformedMessageException {
    WireReader r = expect(frame, REQUEST, "a handshake request");
    String consumer = r.text("consumer engine id", MAX_TEXT);
    long incarnation = r.i64();
    List<KvLayout> ranks = readLayouts(r);
    Request request =
        new Request(consumer, incarnation, ranks, r.blob("consumer metadata", MAX_FRAME_BYTES));
    r.expectEnd();
    return request;
  }

  /** Encodes a refusal; it carries nothing but its reason. */
  public static byte[] encode(Refused refused) {
    return header(REFUSED).text(ProtocolMessage.Codec.clip(refused.reason())).toByteArray();
  }

  /** Encodes a response: an acceptance or a refusal. */
  public static byte[] encode(Response response) {
    if (response instanceof Refused refused) {
      return encode(refused);
    }
    Accepted a = (Accepted) response;
    WireWriter w =
        header(ACCEPTED)
            .text(a.producerEngineId())
            .i64(a.producerIncarnation())
            .i64(a.clockSampleNanos())
            .u8(a.ranks().size());
    for (Rank rank : a.ranks()) {
      w.raw(rank.layout().encode());
      rank.regionAddresses().forEach(w::i64);
      w.i32(rank.deviceId()).u8(rank.memoryKind().ordinal()).blob(rank.metadata);
    }
    return w.toByteArray();
  }

  /** Decodes an untrusted response: an acceptance or a refusal. */
  public static Response decodeResponse(byte[] frame) throws MalformedMessageException {
    WireReader r = new WireReader(frame);
    r.expectMagic(MAGIC, "kvbridge handshake", VERSION);
    int type = r.u8();
    if (type == REFUSED) {
      Refused refused = new Refused(r.text("reason", MAX_TEXT));
      r.expectEnd();
      return refused;
    }
    if (type != ACCEPTED) {
      throw new MalformedMessageException("expected a handshake response, got type " + type);
    }
    String engineId = r.text("producer engine id", MAX_TEXT);
    long incarnation = r.i64();
    long clock = r.i64();
    int count = r.u8();
    if (count == 0) {
      throw new MalformedMessageException("an acceptance names 1 to " + MAX_RANKS + " ranks");
    }
    List<Rank> ranks = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      KvLayout layout = readLayout(r);
      List<Long> addresses = new ArrayList<>(layout.regions());
      for (int region = 0; region < layout.regions(); region++) {
        addresses.add(r.i64());
      }
      int deviceId = r.i32();
      int kind = r.u8();
      byte[] metadata = r.blob("producer metadata", MAX_FRAME_BYTES);
      if (deviceId < 0) {
        throw new MalformedMessageException("rank " + i + " has device " + deviceId);
      }
      if (kind >= MemoryKind.values().length) {
        throw new MalformedMessageException("unknown memory kind " + kind);
      }
      ranks.add(new Rank(layout, addresses, deviceId, MemoryKind.values()[kind], metadata));
    }
    r.expectEnd();
    return new Accepted(engineId, incarnation, clock, ranks);
  }

  private static WireWriter header(int type) {
    return new WireWriter().raw(MAGIC).u8(VERSION).u8(type);
  }

  private static boolean hasHeader(byte[] frame, int type) {
    return frame.length >= MAGIC.length + 2
        && Arrays.equals(frame, 0, MAGIC.length, MAGIC, 0, MAGIC.length)
        && frame[MAGIC.length] == VERSION
        && frame[MAGIC.length + 1] == type;
  }

  private static WireReader expect(byte[] frame, int type, String what)
      throws MalformedMessageException {
    WireReader r = new WireReader(frame);
    r.expectMagic(MAGIC, "kvbridge handshake", VERSION);
    int seen = r.u8();
    if (seen != type) {
      throw new MalformedMessageException("expected " + what + ", got type " + seen);
    }
    return r;
  }

  private static List<KvLayout> readLayouts(WireReader r) throws MalformedMessageException {
    int count = r.u8();
    if (count == 0) {
      throw new MalformedMessageException("a request names 1 to " + MAX_RANKS + " ranks");
    }
    List<KvLayout> layouts = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      layouts.add(readLayout(r));
    }
    return layouts;
  }

  private static KvLayout readLayout(WireReader r) throws MalformedMessageException {
    try {
      return KvLayout.decode(r.dataInput());
    } catch (java.io.EOFException e) {
      throw new MalformedMessageException("truncated");
    } catch (java.io.IOException | IllegalArgumentException e) {
      throw new MalformedMessageException("layout: " + e.getMessage());
    }
  }

  private static List<KvLayout> checkedRanks(List<KvLayout> ranks) {
    List<KvLayout> copy = List.copyOf(ranks);
    if (copy.isEmpty() || copy.size() > MAX_RANKS) {
      throw new IllegalArgumentException(
          "an engine has 1 to " + MAX_RANKS + " ranks, got " + copy.size());
    }
    return copy;
  }

  private static byte[] checkedNonce(byte[] nonce) {
    if (nonce.length != NONCE_BYTES) {
      throw new IllegalArgumentException(
          "a nonce is " + NONCE_BYTES + " bytes, got " + nonce.length);
    }
    return nonce.clone();
  }
}
