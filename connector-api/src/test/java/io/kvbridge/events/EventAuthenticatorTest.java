package io.kvbridge.events;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.net.HandshakeSecret;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class EventAuthenticatorTest {

  private static final EventAuthenticator AUTH =
      new EventAuthenticator(HandshakeSecret.of("an example deployment secret"));

  /** The batch and snapshot of the vector in docs/events.md. */
  private static final KvEventBatch BATCH =
      new KvEventBatch(
          "decode-0",
          0x1a2bL,
          7,
          List.of(
              new KvEvent.Stored(List.of(0x6ba44d6a2954e750L, 0x453d63beca00767bL)),
              new KvEvent.Removed(List.of(0x453d63beca00767bL)),
              new KvEvent.Cleared()));

  private static final CacheSnapshot SNAPSHOT =
      new CacheSnapshot("decode-0", 0x1a2bL, 7, "llama-3.1-8b", 16, List.of(0x6ba44d6a2954e750L));

  @Test
  void theCanonicalBytesAndMacsAreTheSpecifiedVector() {
    assertThat(HexFormat.of().formatHex(EventAuthenticator.canonical(BATCH)))
        .isEqualTo(
            "000000196b766272696467652f6b762d6576656e742d62617463682f31000000086465636f64652d30"
                + "0000000000001a2b00000000000000070000000301000000026ba44d6a2954e750453d63beca00767b"
                + "0200000001453d63beca00767b0300000000");
    assertThat(AUTH.mac(BATCH))
        .isEqualTo("f20e5717c519e72455088a5aa1da946067e04b267b713f9ee5d364c361794d23");
    assertThat(HexFormat.of().formatHex(EventAuthenticator.canonical(SNAPSHOT)))
        .isEqualTo(
            "000000166b766272696467652f6b762d736e617073686f742f31000000086465636f64652d30"
                + "0000000000001a2b00000000000000070000000c6c6c616d612d332e312d3862000000100000000"
                + "16ba44d6a2954e750");
    assertThat(AUTH.mac(SNAPSHOT))
        .isEqualTo("7e0dfbab0ba88e629eb5ff24123d503fbea99ff009fd21ff5ca9c556fc688190");
  }

  @Test
  void aSignedBatchAndSnapshotVerifyAfterTheirJsonForm() {
    Map<String, Object> batch = AUTH.signed(BATCH);
    Map<String, Object> snapshot = AUTH.signed(SNAPSHOT);

    assertThat(AUTH.verify(KvEventBatch.fromMap(batch), batch)).isTrue();
    assertThat(AUTH.verify(CacheSnapshot.fromMap(snapshot), snapshot)).isTrue();
  }

  @Test
  void anyChangedFieldAMissingMacOrAnotherSecretFailsVerification() {
    Map<String, Object> signed = AUTH.signed(BATCH);
    KvEventBatch nextSequence = new KvEventBatch("decode-0", 0x1a2bL, 8, BATCH.events());
    KvEventBatch otherEngine = new KvEventBatch("decode-1", 0x1a2bL, 7, BATCH.events());
    KvEventBatch otherIncarnation = new KvEventBatch("decode-0", 0x1a2cL, 7, BATCH.events());
    KvEventBatch fewerEvents =
        new KvEventBatch("decode-0", 0x1a2bL, 7, BATCH.events().subList(0, 2));
    KvEventBatch otherHash =
        new KvEventBatch(
            "decode-0", 0x1a2bL, 7, List.of(new KvEvent.Stored(List.of(0x6ba44d6a2954e751L))));
    // The same hashes, stored instead of removed.
    KvEventBatch otherType =
        new KvEventBatch(
            "decode-0",
            0x1a2bL,
            7,
            List.of(
                new KvEvent.Stored(List.of(0x6ba44d6a2954e750L, 0x453d63beca00767bL)),
                new KvEvent.Stored(List.of(0x453d63beca00767bL)),
                new KvEvent.Cleared()));

    for (KvEventBatch forged :
        List.of(nextSequence, otherEngine, otherIncarnation, fewerEvents, otherHash, otherType)) {
      assertThat(AUTH.verify(forged, signed)).as("%s", forged).isFalse();
    }
    assertThat(AUTH.verify(BATCH, BATCH.toMap())).isFalse();
    assertThat(AUTH.verify(BATCH, Map.of("mac", 42))).isFalse();
    assertThat(AUTH.verify(BATCH, Map.of("mac", "f20e"))).isFalse();
    EventAuthenticator other =
        new EventAuthenticator(HandshakeSecret.of("another deployment's secret"));
    assertThat(other.verify(BATCH, signed)).isFalse();
    CacheSnapshot otherModel =
        new CacheSnapshot("decode-0", 0x1a2bL, 7, "llama-3.1-70b", 16, SNAPSHOT.blockHashes());
    assertThat(AUTH.verify(otherModel, AUTH.signed(SNAPSHOT))).isFalse();
  }

  @Test
  void itNeverShowsTheKey() {
    assertThat(AUTH).hasToString("EventAuthenticator[redacted]");
  }
}
