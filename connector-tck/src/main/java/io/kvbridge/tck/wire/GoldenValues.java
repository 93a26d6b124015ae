package io.kvbridge.tck.wire;

import io.kvbridge.integrity.ChecksumScheme;
import io.kvbridge.integrity.PromptDigest;
import io.kvbridge.integrity.ReadDigest;
import io.kvbridge.layout.KvLayout;
import io.kvbridge.net.HandshakeSecret;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.MemoryKind;
import io.kvbridge.wire.Handshake;
import io.kvbridge.wire.HandshakeKeys;
import io.kvbridge.wire.LeaseRef;
import io.kvbridge.wire.ProtocolMessage;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The values behind the wire format's golden vectors ({@code golden-vectors.txt} beside this
 * class): every protocol message, every handshake frame (with and without the deployment secret),
 * and the digests. Fixed inputs only, so each encodes to the same bytes in any implementation; the
 * file is what a peer written in another language tests itself against, and {@code
 * docs/protocol.md} explains each field.
 */
public final class GoldenValues {

  /** The deployment secret of the authenticated vectors. */
  public static final HandshakeSecret SECRET = HandshakeSecret.of("kvbridge golden vector secret");

  /** The lease every message names. */
  public static final LeaseRef LEASE = new LeaseRef("req-1", "00112233445566778899aabbccddeeff");

  /** The prompt the digests are computed over: token ids 1 to 8. */
  public static final int[] PROMPT = {1, 2, 3, 4, 5, 6, 7, 8};

  /** The prompt digest of {@link #PROMPT}. */
  public static final String PROMPT_DIGEST = PromptDigest.of(PROMPT, PROMPT.length);

  /**
   * The producer's model as one engine sees it: 2 layers, K and V, 4 KV heads of 8 two-byte
   * elements, blocks of 4 tokens, 64 blocks, head-major.
   */
  public static final KvLayout PRODUCER_MODEL =
      new KvLayout("llama-test@1", 2, 2, 2, 4, 0, 4, 8, 4, 64, KvLayout.MemoryOrder.HEAD_MAJOR);

  /** The producer's two tensor-parallel ranks: heads 0-1 and heads 2-3. */
  public static final List<KvLayout> PRODUCER_RANKS =
      List.of(PRODUCER_MODEL.forRank(0, 2), PRODUCER_MODEL.forRank(1, 2));

  /** The consumer's one rank: every head, blocks of 8 tokens, 128 blocks. */
  public static final List<KvLayout> CONSUMER_RANKS =
      List.of(
          new KvLayout(
              "llama-test@1", 2, 2, 2, 4, 0, 4, 8, 8, 128, KvLayout.MemoryOrder.HEAD_MAJOR));

  /** The producer's blocks holding the prompt's 8 tokens. */
  public static final List<Integer> BLOCKS = List.of(3, 17);

  /**
   * The checksums a LAYERS announcement of layers 0 and 1 of {@link #BLOCKS} on P's two ranks
   * carries: by rank, then layer, then block, {@code 0x0a0b0c00 + 16 × rank + 4 × layer + block
   * index}.
   */
  public static final List<List<List<Integer>>> LAYER_CHECKSUMS =
      List.of(
          List.of(List.of(0x0a0b0c00, 0x0a0b0c01), List.of(0x0a0b0c04, 0x0a0b0c05)),
          List.of(List.of(0x0a0b0c10, 0x0a0b0c11), List.of(0x0a0b0c14, 0x0a0b0c15)));

  /** The binding of the lease on {@link #BLOCKS} for {@code req-1}. */
  public static final byte[] BINDING = ReadDigest.binding("req-1", PROMPT_DIGEST, 8, BLOCKS);

  /** The shape of a read from {@link #PRODUCER_RANKS} into {@link #CONSUMER_RANKS}. */
  public static final byte[] SHAPE = ReadDigest.shape(PRODUCER_RANKS, CONSUMER_RANKS);

  /** The read digest of reading that lease whole in that shape. */
  public static final ReadDigest READ_DIGEST = ReadDigest.of(BINDING, SHAPE, 0);

  /** The producer's greeting of the plain conversation. */
  public static final Handshake.Greeting GREETING = new Handshake.Greeting(bytes(0x10), false);

  /** The producer's greeting of the authenticated conversation. */
  public static final Handshake.Greeting GREETING_AUTHENTICATED =
      new Handshake.Greeting(bytes(0x10), true);

  /** The consumer's challenge of the authenticated conversation. */
  public static final Handshake.Challenge CHALLENGE = new Handshake.Challenge(bytes(0x20));

  /** The consumer's request. */
  public static final Handshake.Request REQUEST =
      new Handshake.Request(
          "decode-0",
          0x0123456789abcdefL,
          CONSUMER_RANKS,
          new byte[] {(byte) 0xde, (byte) 0xad, (byte) 0xbe, (byte) 0xef});

  /** The producer's acceptance. */
  public static final Handshake.Accepted ACCEPTED =
      new Handshake.Accepted(
          "prefill-0",
          0x0fedcba987654321L,
          1_000_000_000L,
          List.of(
              new Handshake.Rank(
                  PRODUCER_RANKS.get(0),
                  List.of(0x7f00_0000_1000L),
                  0,
                  MemoryKind.DRAM,
                  new byte[] {(byte) 0xca, (byte) 0xfe}),
              new Handshake.Rank(
                  PRODUCER_RANKS.get(1),
                  List.of(0x7f00_0100_0000L),
                  1,
                  MemoryKind.VRAM,
                  new byte[] {(byte) 0xbe, (byte) 0xef})));

  /**
   * A producer of one rank holding {@link #PRODUCER_MODEL} whole, its KV one tensor per layer as
   * vLLM allocates it ({@link KvLayout.Placement#PER_LAYER}, block-major): two region addresses.
   */
  public static final KvLayout PER_LAYER_RANK =
      PRODUCER_MODEL.withMemory(KvLayout.MemoryOrder.BLOCK_MAJOR, KvLayout.Placement.PER_LAYER);

  /** A producer's acceptance naming one rank of {@link #PER_LAYER_RANK}: two region addresses. */
  public static final Handshake.Accepted ACCEPTED_PER_LAYER =
      new Handshake.Accepted(
          "prefill-1",
          0x0fedcba987654322L,
          2_000_000_000L,
          List.of(
              new Handshake.Rank(
                  PER_LAYER_RANK,
                  List.of(0x7f10_0000_0000L, 0x7f20_0000_0000L),
                  0,
                  MemoryKind.VRAM,
                  new byte[] {(byte) 0xf0, (byte) 0x0d})));

  private GoldenValues() {}

  /** Every protocol message of the vectors, by vector name. */
  public static Map<String, ProtocolMessage> messages() {
    Map<String, ProtocolMessage> m = new LinkedHashMap<>();
    m.put("message.completion", new ProtocolMessage.Completion(LEASE, "decode-0", READ_DIGEST, 0));
    m.put("message.ack", new ProtocolMessage.Ack(LEASE));
    m.put("message.nack", new ProtocolMessage.Nack(LEASE, "WRONG_BLOCKS"));
    m.put(
        "message.heartbeat",
        new ProtocolMessage.Heartbeat(
            "decode-0", 5_000_000_000L, List.of(LEASE, new LeaseRef("req-2", LEASE.token()))));
    m.put(
        "message.renewed",
        new ProtocolMessage.Renewed(
            5_000_000_000L,
            7_000_000_000L,
            List.of(new ProtocolMessage.Renewal(LEASE, 37_000_000_000L))));
    m.put(
        "message.confirm",
        new ProtocolMessage.Confirm(LEASE, "decode-0", READ_DIGEST, 0, 5_000_000_000L));
    m.put(
        "message.confirmed",
        new ProtocolMessage.Confirmed(LEASE, 37_000_000_000L, 5_000_000_000L, 7_000_000_000L));
    m.put("message.release", new ProtocolMessage.Release(LEASE, "decode-0", "aborted on D"));
    m.put("message.layers", new ProtocolMessage.Layers(LEASE, 0, 2, LAYER_CHECKSUMS));
    return m;
  }

  /** The keys of the authenticated conversation: {@link #SECRET} and both nonces. */
  public static HandshakeKeys keys() {
    return HandshakeKeys.derive(SECRET, GREETING_AUTHENTICATED.nonce(), CHALLENGE.nonce());
  }

  /**
   * Every handshake frame of the vectors, encoded, by vector name: the plain conversation, then the
   * authenticated one (greeting, challenge, proof, sealed request, sealed acceptance).
   */
  public static Map<String, byte[]> handshakeFrames() {
    Map<String, byte[]> m = new LinkedHashMap<>();
    m.put("handshake.greeting", Handshake.encode(GREETING));
    m.put("handshake.request", Handshake.encode(REQUEST));
    m.put("handshake.accepted", Handshake.encode(ACCEPTED));
    m.put("handshake.accepted.per-layer", Handshake.encode(ACCEPTED_PER_LAYER));
    m.put("handshake.refused", Handshake.encode(new Handshake.Refused("incompatible KV layout")));
    byte[] greeting = Handshake.encode(GREETING_AUTHENTICATED);
    byte[] challenge = Handshake.encode(CHALLENGE);
    HandshakeKeys keys = keys();
    m.put("handshake.greeting.authenticated", greeting);
    m.put("handshake.challenge", challenge);
    m.put("handshake.proof", Handshake.encodeProof(keys.proof(greeting, challenge)));
    m.put("handshake.request.sealed", keys.sealRequest(Handshake.encode(REQUEST)));
    m.put("handshake.accepted.sealed", keys.sealAnswer(Handshake.encode(ACCEPTED)));
    return m;
  }

  /** The keys the authenticated conversation derives, by vector name. */
  public static Map<String, byte[]> handshakeKeys() {
    byte[][] keys = keys().keys();
    Map<String, byte[]> m = new LinkedHashMap<>();
    m.put("handshake.key.proof", keys[0]);
    m.put("handshake.key.request", keys[1]);
    m.put("handshake.key.answer", keys[2]);
    return m;
  }

  /**
   * The digests of the vectors, by vector name: the prompt digest, the read digest's three steps
   * (and the read skipping 8 tokens), and the layout fingerprint of {@link #PRODUCER_MODEL} (the
   * same for each of its ranks, in any memory order and placement).
   */
  public static Map<String, byte[]> digests() {
    Map<String, byte[]> m = new LinkedHashMap<>();
    m.put("digest.prompt", HexFormat.of().parseHex(PROMPT_DIGEST));
    m.put("digest.binding", BINDING.clone());
    m.put("digest.shape", SHAPE.clone());
    m.put("digest.read", READ_DIGEST.toBytes());
    m.put("digest.read.skip8", ReadDigest.of(BINDING, SHAPE, 8).toBytes());
    m.put("digest.layout-fingerprint", HexFormat.of().parseHex(PRODUCER_MODEL.fingerprint()));
    return m;
  }

  /**
   * The checksums of the vectors, as four big-endian bytes each, by vector name: a block of 1024
   * bytes and one of 8192 bytes, byte {@code i} of each being {@code i % 251}, under both schemes.
   */
  public static Map<String, byte[]> checksums() {
    Map<String, byte[]> m = new LinkedHashMap<>();
    for (int size : new int[] {1024, 8192}) {
      KvMemory block = HeapMemory.counting(size);
      for (ChecksumScheme scheme : ChecksumScheme.values()) {
        int crc = scheme.checksum(block, 0, size);
        m.put(
            "checksum." + scheme.wireName() + "." + size,
            HexFormat.of().parseHex(HexFormat.of().toHexDigits(crc)));
      }
    }
    return m;
  }

  /** 16 bytes counting up from {@code first}. */
  private static byte[] bytes(int first) {
    byte[] b = new byte[Handshake.NONCE_BYTES];
    for (int i = 0; i < b.length; i++) {
      b[i] = (byte) (first + i);
    }
    return b;
  }
}
