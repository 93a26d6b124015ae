package io.kvbridge.wire;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.transfer.MemoryKind;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;

/**
 * The consumer's first contact with a producer, and its wire form, specified field by field in
 * {@code docs/protocol.md}. One conversation of three frames over a {@link HandshakeChannel}:
 *
 * <ol>
 *   <li>P → D {@link Greeting}: a fresh nonce, and whether P requires authentication;
 *   <li>D → P {@link Request}: D's own nonce, engine id, incarnation, the layouts of its ranks and
 *       its lead rank's transport metadata (so P can send it notifications);
 *   <li>P → D {@link Accepted}: P's engine id, incarnation and a sample of its clock, and for each
 *       of its ranks the layout, the address of its KV region and its transport metadata; or {@link
 *       Refused} with a reason.
 * </ol>
 *
 * <p>With a {@link HandshakeSecret}, the request and the acceptance each end with an HMAC-SHA256
 * over both nonces and the frame's own bytes: P checks the request's before anything of its own
 * leaves it, D checks the acceptance's before it loads anything. A refusal carries no MAC and gives
 * nothing away but its reason.
 */
public final class Handshake {

  /** The handshake version this code speaks; a frame of another version is refused. */
  public static final int VERSION = 3;

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
  private static final int AUTHENTICATION_REQUIRED = 1;
  private static final String REQUEST_DOMAIN = "kvbridge/handshake/request/2";
  private static final String ACCEPTED_DOMAIN = "kvbridge/handshake/accepted/2";
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
   * @param nonce {@value #NONCE_BYTES} fresh random bytes of D's
   * @param consumerEngineId the consumer's engine id
   * @param consumerIncarnation the consumer's incarnation: drawn at every start, so a restarted
   *     engine of the same id is told apart from its former self
   * @param consumerRanks the layouts of the consumer's tensor-parallel ranks, by rank (1 to 255)
   * @param consumerMetadata the transport metadata of the consumer's lead rank (0), so P can send
   *     it notifications
   */
  public record Request(
      byte[] nonce,
      String consumerEngineId,
      long consumerIncarnation,
      List<KvLayout> consumerRanks,
      byte[] consumerMetadata) {
    /** Copies the arrays and the list. */
    public Request {
      nonce = checkedNonce(nonce);
      consumerRanks = checkedRanks(consumerRanks);
      consumerMetadata = consumerMetadata.clone();
    }

    @Override
    public byte[] nonce() {
      return nonce.clone();
    }

    @Override
    public byte[] consumerMetadata() {
      return consumerMetadata.clone();
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Request r
          && Arrays.equals(nonce, r.nonce)
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
   * @param regionAddress the base address of the rank's registered KV region
   * @param deviceId the device of the region
   * @param memoryKind host or device memory
   * @param metadata the rank's transport metadata blob
   */
  public record Rank(
      KvLayout layout, long regionAddress, int deviceId, MemoryKind memoryKind, byte[] metadata) {
    /** Copies the metadata. */
    public Rank {
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
          && regionAddress == r.regionAddress
          && deviceId == r.deviceId
          && memoryKind == r.memoryKind
          && Arrays.equals(metadata, r.metadata);
    }

    @Override
    public int hashCode() {
      return layout.hashCode() * 31 + Long.hashCode(regionAddress);
    }

    @Override
    public String toString() {
      return "Rank[heads "
          + layout.headStart()
          + "+"
          + layout.headCount()
          + " at 0x"
          + Long.toHexString(regionAddress)
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
    return new WireWriter()
        .raw(MAGIC)
        .u8(VERSION)
        .u8(GREETING)
        .raw(greeting.nonce)
        .u8(greeting.authenticationRequired() ? AUTHENTICATION_REQUIRED : 0)
        .toByteArray();
  }

  /** Decodes an untrusted greeting. */
  public static Greeting decodeGreeting(byte[] frame) throws MalformedMessageException {
    WireReader r = new WireReader(frame);
    r.expectMagic(MAGIC, "kvbridge handshake", VERSION);
    if (r.u8() != GREETING) {
      throw new MalformedMessageException("expected a handshake greeting");
    }
    byte[] nonce = r.fixed(NONCE_BYTES);
    int flags = r.u8();
    if ((flags & ~AUTHENTICATION_REQUIRED) != 0) {
      throw new MalformedMessageException("unknown greeting flags " + flags);
    }
    r.expectEnd();
    return new Greeting(nonce, flags == AUTHENTICATION_REQUIRED);
  }

  /**
   * Encodes a request answering {@code greeting}; with {@code secret}, ends it with the MAC that
   * proves D knows it.
   */
  public static byte[] encode(
      Request request, Greeting greeting, Optional<HandshakeSecret> secret) {
    WireWriter w =
        new WireWriter()
            .raw(MAGIC)
            .u8(VERSION)
            .u8(REQUEST)
            .raw(request.nonce)
            .text(request.consumerEngineId())
            .i64(request.consumerIncarnation())
            .u8(request.consumerRanks().size());
    request.consumerRanks().forEach(l -> w.raw(l.encode()));
    byte[] body = w.blob(request.consumerMetadata).toByteArray();
    return withMac(body, secret.map(s -> s.mac(REQUEST_DOMAIN, greeting.nonce, body)));
  }

  /**
   * Decodes an untrusted request answering {@code greeting}.
   *
   * @param secret the deployment's secret, if P has one: the request must then carry its MAC
   * @throws HandshakeAuthenticationException if a MAC is required and missing or wrong
   */
  public static Request decodeRequest(
      byte[] frame, Greeting greeting, Optional<HandshakeSecret> secret)
      throws MalformedMessageException {
    WireReader r = new WireReader(frame);
    r.expectMagic(MAGIC, "kvbridge handshake", VERSION);
    if (r.u8() != REQUEST) {
      throw new MalformedMessageException("expected a handshake request");
    }
    byte[] nonce = r.fixed(NONCE_BYTES);
    String consumer = r.text("consumer engine id", MAX_TEXT);
    long incarnation = r.i64();
    List<KvLayout> ranks = readLayouts(r);
    Request request =
        new Request(
            nonce, consumer, incarnation, ranks, r.blob("consumer metadata", MAX_FRAME_BYTES));
    int bodyLength = r.position();
    byte[] mac = readMac(r);
    if (secret.isPresent()) {
      byte[] body = Arrays.copyOf(frame, bodyLength);
      if (mac.length == 0) {
        throw new HandshakeAuthenticationException(
            "this producer requires an authenticated handshake; the request carries no MAC"
                + " (set the same kvbridge.handshake.secret on both sides)");
      }
      if (!secret.get().verify(mac, REQUEST_DOMAIN, greeting.nonce, body)) {
        throw new HandshakeAuthenticationException(
            "the request's MAC does not prove the deployment's secret");
      }
    }
    return request;
  }

  /** Encodes a refusal; it needs no MAC and carries nothing but its reason. */
  public static byte[] encode(Refused refused) {
    return new WireWriter()
        .raw(MAGIC)
        .u8(VERSION)
        .u8(REFUSED)
        .text(ProtocolMessage.Codec.clip(refused.reason()))
        .toByteArray();
  }

  /**
   * Encodes a response to {@code request}, after {@code greeting}; an acceptance ends with its MAC
   * when there is a {@code secret}.
   */
  public static byte[] encode(
      Response response, Greeting greeting, Request request, Optional<HandshakeSecret> secret) {
    if (response instanceof Refused refused) {
      return encode(refused);
    }
    WireWriter w = new WireWriter().raw(MAGIC).u8(VERSION);
    Accepted a = (Accepted) response;
    w.u8(ACCEPTED)
        .text(a.producerEngineId())
        .i64(a.producerIncarnation())
        .i64(a.clockSampleNanos())
        .u8(a.ranks().size());
    for (Rank rank : a.ranks()) {
      w.raw(rank.layout().encode())
          .i64(rank.regionAddress())
          .i32(rank.deviceId())
          .u8(rank.memoryKind().ordinal())
          .blob(rank.metadata);
    }
    byte[] body = w.toByteArray();
    return withMac(
        body, secret.map(s -> s.mac(ACCEPTED_DOMAIN, greeting.nonce, request.nonce, body)));
  }

  /**
   * Decodes an untrusted response to {@code request}.
   *
   * @param secret the deployment's secret, if D has one: an acceptance must then carry its MAC
   * @throws HandshakeAuthenticationException if a MAC is required and missing or wrong
   */
  public static Response decodeResponse(
      byte[] frame, Greeting greeting, Request request, Optional<HandshakeSecret> secret)
      throws MalformedMessageException {
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
      long address = r.i64();
      int deviceId = r.i32();
      int kind = r.u8();
      byte[] metadata = r.blob("producer metadata", MAX_FRAME_BYTES);
      if (deviceId < 0) {
        throw new MalformedMessageException("rank " + i + " has device " + deviceId);
      }
      if (kind >= MemoryKind.values().length) {
        throw new MalformedMessageException("unknown memory kind " + kind);
      }
      ranks.add(new Rank(layout, address, deviceId, MemoryKind.values()[kind], metadata));
    }
    int bodyLength = r.position();
    byte[] mac = readMac(r);
    if (secret.isPresent()) {
      byte[] body = Arrays.copyOf(frame, bodyLength);
      if (mac.length == 0) {
        throw new HandshakeAuthenticationException(
            "producer "
                + engineId
                + " answered without a MAC; this consumer trusts only producers that prove the"
                + " deployment's secret");
      }
      if (!secret.get().verify(mac, ACCEPTED_DOMAIN, greeting.nonce, request.nonce, body)) {
        throw new HandshakeAuthenticationException(
            "producer " + engineId + "'s answer does not prove the deployment's secret");
      }
    }
    return new Accepted(engineId, incarnation, clock, ranks);
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

  private static byte[] withMac(byte[] body, Optional<byte[]> mac) {
    byte[] tag = mac.orElse(new byte[0]);
    byte[] frame = Arrays.copyOf(body, body.length + 1 + tag.length);
    frame[body.length] = (byte) tag.length;
    System.arraycopy(tag, 0, frame, body.length + 1, tag.length);
    return frame;
  }

  private static byte[] readMac(WireReader r) throws MalformedMessageException {
    int length = r.u8();
    if (length != 0 && length != HandshakeSecret.MAC_BYTES) {
      throw new MalformedMessageException(
          "a MAC is 0 or " + HandshakeSecret.MAC_BYTES + " bytes, got " + length);
    }
    byte[] mac = r.fixed(length);
    r.expectEnd();
    return mac;
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
