package io.kvbridge.discovery.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.spi.Role;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The JSON an engine publishes under its key, written and read back. */
class EngineRecordTest {

  private static final EngineRecord PRODUCER =
      new EngineRecord(
          "prefill-0",
          Role.PRODUCER,
          0xf5a3_9c0e_12b4_d7a1L,
          Optional.of("tcp://10.0.0.5:7100"),
          Optional.of("prefill-0"),
          "0c1d2e3f",
          1,
          OptionalInt.of(812),
          3);

  @Test
  void isWrittenWithSnakeCaseFieldsAndTheIncarnationInHex() {
    assertThat(new String(PRODUCER.toJson(), StandardCharsets.UTF_8))
        .isEqualTo(
            "{\"version\":1,\"engine_id\":\"prefill-0\",\"role\":\"producer\","
                + "\"incarnation\":\"f5a39c0e12b4d7a1\",\"handshake_address\":\"tcp://10.0.0.5:7100\","
                + "\"agent_name\":\"prefill-0\",\"layout_fingerprint\":\"0c1d2e3f\",\"tp_degree\":1,"
                + "\"free_blocks\":812,\"live_leases\":3}");
  }

  @Test
  void readsBackWhatItWrites() {
    assertThat(EngineRecord.fromJson("prefill-0", PRODUCER.toJson())).isEqualTo(PRODUCER);
  }

  @Test
  void unknownValuesAreWrittenAsNullAndReadBackAsAbsent() {
    EngineRecord consumer =
        new EngineRecord(
            "decode-0",
            Role.CONSUMER,
            7,
            Optional.empty(),
            Optional.empty(),
            "0c1d2e3f",
            1,
            OptionalInt.empty(),
            0);

    String json = new String(consumer.toJson(), StandardCharsets.UTF_8);

    assertThat(json).contains("\"handshake_address\":null", "\"free_blocks\":null");
    assertThat(EngineRecord.fromJson("decode-0", consumer.toJson())).isEqualTo(consumer);
  }

  @Test
  void attributesAreWrittenAsAnObjectOfStringsAndReadBack() {
    EngineRecord withUrl =
        new EngineRecord(
            "prefill-0",
            Role.PRODUCER,
            7,
            Optional.empty(),
            Optional.empty(),
            "0c1d2e3f",
            1,
            OptionalInt.empty(),
            0,
            Map.of("base_url", "http://10.0.0.5:8100"));

    assertThat(new String(withUrl.toJson(), StandardCharsets.UTF_8))
        .endsWith(",\"live_leases\":0,\"attributes\":{\"base_url\":\"http://10.0.0.5:8100\"}}");
    assertThat(EngineRecord.fromJson("prefill-0", withUrl.toJson())).isEqualTo(withUrl);
    assertThat(EngineRecord.fromJson("prefill-0", withUrl.toJson()).attribute("base_url"))
        .contains("http://10.0.0.5:8100");
  }

  @Test
  void recordWithoutAttributesReadsAsHavingNone() {
    assertThat(EngineRecord.fromJson("prefill-0", PRODUCER.toJson()).attributes()).isEmpty();
  }

  @Test
  void attributesBeyondTheLimitsAreRefused() {
    Map<String, String> tooMany = new java.util.HashMap<>();
    for (int i = 0; i <= EngineRecord.MAX_ATTRIBUTES; i++) {
      tooMany.put("a" + i, "v");
    }

    assertThatThrownBy(
            () ->
                new EngineRecord(
                    "prefill-0",
                    Role.PRODUCER,
                    7,
                    Optional.empty(),
                    Optional.empty(),
                    "0c1d2e3f",
                    1,
                    OptionalInt.empty(),
                    0,
                    tooMany))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("attributes may hold at most 16 names");
  }

  @Test
  void fieldsALaterVersionAddsAreIgnored() {
    String json =
        new String(PRODUCER.toJson(), StandardCharsets.UTF_8)
            .replace("{\"version\":1,", "{\"version\":2,\"ranks\":[{\"rank\":0}],\"zone\":\"a\",");

    assertThat(EngineRecord.fromJson("prefill-0", json.getBytes(StandardCharsets.UTF_8)))
        .isEqualTo(PRODUCER);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "not JSON | {oops | it is not JSON",
        "an array | [1] | it is not a JSON object",
        "two objects | {\"engine_id\":\"prefill-0\"}{} | it is not one JSON object",
        "another engine's | {\"engine_id\":\"decode-0\"} | not the engine of its key",
        "no role | {\"engine_id\":\"prefill-0\"} | role is missing",
        "unknown role | {\"engine_id\":\"prefill-0\",\"role\":\"router\"} | role 'router'",
        "numeric incarnation | {\"engine_id\":\"prefill-0\",\"role\":\"producer\",\"incarnation\":5} |"
            + " incarnation must be a string",
        "non-hex incarnation | {\"engine_id\":\"prefill-0\",\"role\":\"producer\",\"incarnation\":\"xyz\"}"
            + " | incarnation 'xyz'",
        "negative live leases | {\"engine_id\":\"prefill-0\",\"live_leases\":-1} |"
            + " live_leases must be a whole number from 0",
        "fractional free blocks | {\"engine_id\":\"prefill-0\",\"free_blocks\":1.5} |"
            + " free_blocks must be a whole number from 0",
        "attributes not an object | {\"engine_id\":\"prefill-0\",\"attributes\":[1]} |"
            + " attributes must be an object of strings",
        "numeric attribute | {\"engine_id\":\"prefill-0\",\"attributes\":{\"port\":8100}} |"
            + " attribute port must be a string",
      })
  void malformedValueIsRefusedNamingWhatIsWrong(String name, String json, String problem) {
    assertThatThrownBy(
            () -> EngineRecord.fromJson("prefill-0", json.getBytes(StandardCharsets.UTF_8)))
        .isInstanceOf(MalformedEngineRecordException.class)
        .hasMessageContaining(problem);
  }
}
