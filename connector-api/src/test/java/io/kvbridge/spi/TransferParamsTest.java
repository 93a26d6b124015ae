package io.kvbridge.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.integrity.ChecksumScheme;
import io.kvbridge.lease.LeaseToken;
import io.kvbridge.observe.TraceContext;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class TransferParamsTest {

  private final TransferParams params =
      new TransferParams(
          "prefill-0",
          0x0123_4567_89ab_cdefL,
          "req-1",
          List.of(4, 9),
          32,
          TokenIds.of(new int[32]).digest(32),
          LeaseToken.random().value(),
          123L,
          Optional.of("local://prefill-0"),
          ChecksumScheme.CRC32C,
          List.of(List.of(0x8badf00d, 17), List.of(1, 2)));

  @Test
  void mapFormSurvivesTheRoundTrip() {
    assertThat(TransferParams.fromMap(params.toMap())).isEqualTo(params);
  }

  @Test
  void checksumsTravelAsEightHexDigitsPerBlockInOneStringPerRank() {
    assertThat(params.toMap())
        .containsEntry("block_checksums", List.of("8badf00d00000011", "0000000100000002"));
  }

  @Test
  void streamedParamsTravelWithoutChecksumsAndSurviveTheRoundTrip() {
    Map<String, Object> map = new HashMap<>(params.toMap());
    map.put("block_checksums", List.of());
    map.put("streamed", true);

    TransferParams streamed = TransferParams.fromMap(map);

    assertThat(streamed.streamed()).isTrue();
    assertThat(streamed.blockChecksums()).isEmpty();
    assertThat(streamed.toMap()).containsEntry("streamed", true);
    assertThat(TransferParams.fromMap(streamed.toMap())).isEqualTo(streamed);
    assertThat(params.toMap()).doesNotContainKey("streamed");
  }

  @Test
  void streamedParamsWithChecksumsAndWholeOnesWithoutAreRefused() {
    Map<String, Object> streamedWithChecksums = new HashMap<>(params.toMap());
    streamedWithChecksums.put("streamed", true);
    Map<String, Object> wholeWithout = new HashMap<>(params.toMap());
    wholeWithout.put("block_checksums", List.of());

    assertThatThrownBy(() -> TransferParams.fromMap(streamedWithChecksums))
        .isInstanceOf(InvalidTransferParamsException.class)
        .hasMessageContaining("must be empty when streamed");
    assertThatThrownBy(() -> TransferParams.fromMap(wholeWithout))
        .isInstanceOf(InvalidTransferParamsException.class)
        .hasMessageContaining("one checksum per block");
  }

  @Test
  void streamedOfAnotherJsonTypeIsRefusedNamingIt() {
    Map<String, Object> map = new HashMap<>(params.toMap());
    map.put("streamed", "yes");

    assertThatThrownBy(() -> TransferParams.fromMap(map))
        .isInstanceOf(InvalidTransferParamsException.class)
        .hasMessageEndingWith("streamed must be true or false, got a string");
  }

  @Test
  void checksumListOfAnotherLengthIsRefused() {
    Map<String, Object> map = new HashMap<>(params.toMap());
    map.put("block_checksums", List.of("8badf00d00000011", "8badf00d"));

    assertThatThrownBy(() -> TransferParams.fromMap(map))
        .isInstanceOf(InvalidTransferParamsException.class)
        .hasMessageContaining("one checksum per block");
  }

  @Test
  void checksumsThatAreNotOneStringPerRankAreRefused() {
    Map<String, Object> map = new HashMap<>(params.toMap());
    map.put("block_checksums", "8badf00d00000011");

    assertThatThrownBy(() -> TransferParams.fromMap(map))
        .isInstanceOf(InvalidTransferParamsException.class)
        .hasMessageContaining("one per producer rank");
  }

  @Test
  void unknownChecksumSchemeIsRefusedByName() {
    Map<String, Object> map = new HashMap<>(params.toMap());
    map.put("checksum_scheme", "md5");

    assertThatThrownBy(() -> TransferParams.fromMap(map))
        .hasMessageContaining("checksum_scheme 'md5' is unknown");
  }

  @Test
  void malformedPromptDigestIsRefused() {
    Map<String, Object> map = new HashMap<>(params.toMap());
    map.put("prompt_digest", "ABC");

    assertThatThrownBy(() -> TransferParams.fromMap(map)).hasMessageContaining("prompt_digest");
  }

  @Test
  void missingFieldIsNamed() {
    Map<String, Object> map = new HashMap<>(params.toMap());
    map.remove("lease_token");

    assertThatThrownBy(() -> TransferParams.fromMap(map))
        .isInstanceOf(InvalidTransferParamsException.class)
        .hasMessageContaining("lease_token");
  }

  @Test
  void negativeBlockIdIsRefused() {
    Map<String, Object> map = new HashMap<>(params.toMap());
    map.put("block_ids", List.of(1, -2));

    assertThatThrownBy(() -> TransferParams.fromMap(map))
        .hasMessageContaining("block_ids holds -2");
  }

  @Test
  void blockIdOfWrongTypeIsRefused() {
    Map<String, Object> map = new HashMap<>(params.toMap());
    map.put("block_ids", List.of(1, "two"));

    assertThatThrownBy(() -> TransferParams.fromMap(map)).hasMessageContaining("integers");
  }

  @Test
  void tooManyBlocksAreRefused() {
    Map<String, Object> map = new HashMap<>(params.toMap());
    map.put("block_ids", java.util.Collections.nCopies(TransferParams.MAX_BLOCKS + 1, 1));

    assertThatThrownBy(() -> TransferParams.fromMap(map))
        .hasMessageContaining("more than the limit");
  }

  @Test
  void emptyBlockListIsRefused() {
    Map<String, Object> map = new HashMap<>(params.toMap());
    map.put("block_ids", List.of());

    assertThatThrownBy(() -> TransferParams.fromMap(map))
        .hasMessageContaining("at least one block");
  }

  @Test
  void tokensOfWrongTypeAreRefusedNamingTheJsonTypeReceived() {
    Map<String, Object> map = new HashMap<>(params.toMap());
    map.put("tokens", "32");

    assertThatThrownBy(() -> TransferParams.fromMap(map))
        .hasMessage("invalid kv_transfer_params: tokens must be an integer, got a string");
  }

  @Test
  void blockIdsOfWrongTypeAreRefusedNamingTheJsonTypeReceived() {
    Map<String, Object> map = new HashMap<>(params.toMap());
    map.put("block_ids", Map.of("0", 4));

    assertThatThrownBy(() -> TransferParams.fromMap(map))
        .hasMessage("invalid kv_transfer_params: block_ids must be a list, got an object");
  }

  @Test
  void oversizedIdIsRefused() {
    Map<String, Object> map = new HashMap<>(params.toMap());
    map.put("request_id", "x".repeat(TransferParams.MAX_TEXT + 1));

    assertThatThrownBy(() -> TransferParams.fromMap(map)).hasMessageContaining("request_id");
  }

  @Test
  void malformedTokenIsRefused() {
    Map<String, Object> map = new HashMap<>(params.toMap());
    map.put("lease_token", "not-a-token");

    assertThatThrownBy(() -> TransferParams.fromMap(map)).hasMessageContaining("lease_token");
  }

  @Test
  void absentParamsAreRefused() {
    assertThatThrownBy(() -> TransferParams.fromMap(null)).hasMessageContaining("missing");
  }

  @Test
  void traceContextTravelsAsTraceparentAndTracestate() {
    String traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    Map<String, Object> map = new HashMap<>(params.toMap());
    map.put("traceparent", traceparent);
    map.put("tracestate", "vendor=x");

    TransferParams traced = TransferParams.fromMap(map);

    assertThat(traced.traceContext())
        .isEqualTo(new TraceContext.W3c(traceparent, Optional.of("vendor=x")));
    assertThat(TransferParams.fromMap(traced.toMap())).isEqualTo(traced);
  }

  @Test
  void paramsWithoutTraceFieldsCarryNoTraceAndWriteNone() {
    assertThat(params.traceContext()).isSameAs(TraceContext.ABSENT);
    assertThat(params.toMap()).doesNotContainKeys("traceparent", "tracestate");
  }

  @Test
  void malformedTraceparentIsReadAsIgnoredNotRefused() {
    Map<String, Object> map = new HashMap<>(params.toMap());
    map.put("traceparent", List.of("00-x"));

    TransferParams read = TransferParams.fromMap(map);

    assertThat(read.traceContext()).isInstanceOf(TraceContext.Ignored.class);
    assertThat(read.toMap()).doesNotContainKey("traceparent");
  }
}
