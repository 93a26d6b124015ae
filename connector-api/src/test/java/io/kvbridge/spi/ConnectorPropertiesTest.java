package io.kvbridge.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ConnectorPropertiesTest {

  private enum Mode {
    AUTO,
    HOST_ONLY
  }

  private static ConnectorProperties of(String... keysAndValues) {
    Map<String, String> map = new java.util.HashMap<>();
    for (int i = 0; i < keysAndValues.length; i += 2) {
      map.put(keysAndValues[i], keysAndValues[i + 1]);
    }
    return ConnectorProperties.of(map);
  }

  private static void assertRefused(Runnable read, String setting, String message) {
    assertThatThrownBy(read::run)
        .isInstanceOfSatisfying(
            InvalidSettingException.class, e -> assertThat(e.setting()).isEqualTo(setting))
        .hasMessage(message);
  }

  @Test
  void unsetPropertiesGiveTheFallback() {
    ConnectorProperties none = ConnectorProperties.EMPTY;

    assertThat(none.bool("x.on", true)).isTrue();
    assertThat(none.integer("x.n", 3, 0, 9)).isEqualTo(3);
    assertThat(none.list("x.names", List.of("A"))).containsExactly("A");
    assertThat(none.choice("x.mode", Mode.class, Mode.AUTO)).isEqualTo(Mode.AUTO);
    assertThat(none.path("x.dir")).isEmpty();
  }

  @Test
  void typedAccessorsReadTheirValues() {
    ConnectorProperties p =
        of(
            "x.on", "TRUE",
            "x.n", " 7 ",
            "x.names", "UCX, GDS",
            "x.mode", "Host-Only",
            "x.dir", "/opt/x",
            "x.wait", "250ms",
            "x.size", "64KiB");

    assertThat(p.bool("x.on", false)).isTrue();
    assertThat(p.integer("x.n", 0, 0, 9)).isEqualTo(7);
    assertThat(p.list("x.names", List.of())).containsExactly("UCX", "GDS");
    assertThat(p.choice("x.mode", Mode.class, Mode.AUTO)).isEqualTo(Mode.HOST_ONLY);
    assertThat(p.path("x.dir")).contains(Path.of("/opt/x"));
    assertThat(p.duration("x.wait", Duration.ZERO)).isEqualTo(Duration.ofMillis(250));
    assertThat(p.bytes("x.size", 0)).isEqualTo(64 * 1024);
  }

  @Test
  void aValueOutsideItsRangeIsRefusedNamingThePropertyTheValueAndTheRange() {
    assertRefused(
        () -> of("x.n", "10").integer("x.n", 0, 0, 9),
        "x.n",
        "x.n '10' is not a whole number between 0 and 9");
  }

  @Test
  void anUnknownChoiceIsRefusedListingTheChoices() {
    assertRefused(
        () -> of("x.mode", "hbm").choice("x.mode", Mode.class, Mode.AUTO),
        "x.mode",
        "x.mode 'hbm' is not one of auto, host-only");
  }

  @Test
  void aListWithAnEmptyEntryIsRefused() {
    assertRefused(
        () -> of("x.names", "UCX,").list("x.names", List.of()),
        "x.names",
        "x.names 'UCX,' is not comma-separated names without empty entries");
  }

  @Test
  void aBlankPathIsRefused() {
    assertRefused(
        () -> of("x.dir", " ").path("x.dir"), "x.dir", "x.dir ' ' is not a file system path");
  }

  @Test
  void anythingButTrueOrFalseIsRefused() {
    assertRefused(
        () -> of("x.on", "yes").bool("x.on", false), "x.on", "x.on 'yes' is not true or false");
  }

  @Test
  void underGivesThePropertiesBelowAPrefixWithoutIt() {
    assertThat(of("x.backend.UCX.mode", "none", "x.other", "1").under("x.backend."))
        .isEqualTo(Map.of("UCX.mode", "none"));
  }

  @Test
  void anUnknownPropertyUnderTheConnectorsPrefixIsRefusedListingTheKnownOnes() {
    assertRefused(
        () -> of("x.memroy", "dram").requireOnlyKnown("x.", List.of("x.memory"), "x.backend."),
        "x.memroy",
        "x.memroy is unknown; known: x.memory, x.backend.*");
  }

  @Test
  void propertiesOfOtherConnectorsAndOpenPrefixesAreLeftAlone() {
    assertThatCode(
            () ->
                of("y.anything", "1", "x.backend.UCX.mode", "none")
                    .requireOnlyKnown("x.", List.of("x.memory"), "x.backend."))
        .doesNotThrowAnyException();
  }
}
