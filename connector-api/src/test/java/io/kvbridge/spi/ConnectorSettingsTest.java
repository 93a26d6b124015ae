package io.kvbridge.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.lease.LeaseTerms;
import io.kvbridge.net.HandshakeAddress;
import java.time.Duration;
import java.util.HexFormat;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

class ConnectorSettingsTest {

  private static ConnectorSettings.Builder builder() {
    return ConnectorSettings.builder("fake", "engine-1");
  }

  private static void assertRefused(
      UnaryOperator<ConnectorSettings.Builder> change, String setting, String message) {
    assertThatThrownBy(() -> change.apply(builder()).build())
        .isInstanceOfSatisfying(
            InvalidSettingException.class, e -> assertThat(e.setting()).isEqualTo(setting))
        .hasMessage(message);
  }

  @Test
  void defaultsFollowCommonDeployments() {
    ConnectorSettings settings = builder().build();

    assertThat(settings.role()).isEqualTo(Role.BOTH);
    assertThat(settings.leaseTerms())
        .isEqualTo(new LeaseTerms(Duration.ofSeconds(30), Duration.ofMinutes(2)));
    assertThat(settings.heartbeatInterval()).isEqualTo(Duration.ofSeconds(5));
    assertThat(settings.safetyMargin()).isEqualTo(Duration.ofSeconds(2));
    assertThat(settings.handshakeAddress()).isEqualTo(HandshakeAddress.parse("local"));
    assertThat(settings.acksRequired()).isEqualTo(1);
    assertThat(settings.streamingMinTokens()).isEqualTo(128);
    assertThat(settings.properties().asMap()).isEmpty();
  }

  @Test
  void aStreamingThresholdBelowOneTokenIsRefused() {
    assertRefused(
        b -> b.streamingMinTokens(0),
        "streaming.min-tokens",
        "streaming.min-tokens (0) must be at least 1, e.g. 128");
  }

  @Test
  void handshakeAddressIsParsedWhenTheSettingsAreBuilt() {
    assertThat(builder().handshakeAddress("tcp://10.1.2.3:7000").build().handshakeAddress())
        .isEqualTo(new HandshakeAddress.Tcp("10.1.2.3", 7000));
  }

  @Test
  void malformedHandshakeAddressIsRefusedAsHandshakeAddress() {
    assertRefused(
        b -> b.handshakeAddress("tcp://host"),
        "handshake.address",
        "handshake.address 'tcp://host' is not an address; use 'local' or 'local://name' (engines"
            + " in one JVM) or 'tcp://host:port' (port 0 picks a free one when serving)");
  }

  @Test
  void blankEngineIdIsRefusedAsEngineId() {
    assertThatThrownBy(() -> ConnectorSettings.builder("fake", " ").build())
        .isInstanceOfSatisfying(
            InvalidSettingException.class, e -> assertThat(e.setting()).isEqualTo("engine-id"))
        .hasMessage("engine-id must not be blank; set it to this engine's unique name");
  }

  @Test
  void blankTypeIsRefusedAsConnectorType() {
    assertThatThrownBy(() -> ConnectorSettings.builder("", "engine-1").build())
        .isInstanceOfSatisfying(
            InvalidSettingException.class,
            e -> assertThat(e.setting()).isEqualTo("connector.type"));
  }

  @Test
  void nonPositiveLeaseDurationIsRefusedAsLeaseDuration() {
    assertRefused(
        b -> b.leaseTerms(Duration.ZERO, Duration.ofMinutes(2)),
        "lease.duration",
        "lease.duration (0s) must be positive, e.g. 5s or 500ms");
  }

  @Test
  void maxLifetimeShorterThanTheLeaseIsRefusedAsLeaseMaxLifetime() {
    assertRefused(
        b -> b.leaseTerms(Duration.ofSeconds(30), Duration.ofSeconds(10)),
        "lease.max-lifetime",
        "lease.max-lifetime (10s) must be at least the lease duration (30s)");
  }

  @Test
  void heartbeatIntervalNotShorterThanTheLeaseIsRefused() {
    assertRefused(
        b -> b.heartbeatInterval(Duration.ofSeconds(30)),
        "lease.heartbeat-interval",
        "lease.heartbeat-interval (30s) must be shorter than the lease duration (30s), or leases"
            + " expire between heartbeats");
  }

  @Test
  void safetyMarginOutsideZeroToTheLeaseIsRefused() {
    assertRefused(
        b -> b.safetyMargin(Duration.ofMillis(-1)),
        "lease.safety-margin",
        "lease.safety-margin (-1ms) must be at least 0s and shorter than the lease duration (30s)");
    assertRefused(
        b -> b.safetyMargin(Duration.ofMinutes(5)),
        "lease.safety-margin",
        "lease.safety-margin (5m) must be at least 0s and shorter than the lease duration (30s)");
  }

  @Test
  void acksBelowOneAreRefused() {
    assertRefused(
        b -> b.acksRequired(0),
        "lease.acks-required",
        "lease.acks-required (0) must be at least 1");
  }

  @Test
  void nonPositiveTimeoutsAreRefusedNamingTheirSetting() {
    assertRefused(
        b -> b.replyTimeout(Duration.ofMillis(-500)),
        "reply-timeout",
        "reply-timeout (-500ms) must be positive, e.g. 5s or 500ms");
    assertRefused(
        b -> b.handshakeTimeout(Duration.ZERO),
        "handshake.timeout",
        "handshake.timeout (0s) must be positive, e.g. 5s or 500ms");
  }

  @Test
  void unsetValueIsRefusedAsUnset() {
    assertRefused(
        b -> b.safetyMargin(null), "lease.safety-margin", "lease.safety-margin must be set");
  }

  @Test
  void anIncarnationIsItsStartsEpochMillisecondsAboveSixteenRandomBits() {
    assertThat(ConnectorSettings.incarnation(0x0123_4567_89ABL, 0x1_CDEF))
        .isEqualTo(0x0123_4567_89AB_CDEFL);
    assertThat(HexFormat.of().toHexDigits(ConnectorSettings.incarnation(1, 2)))
        .isEqualTo("0000000000010002");
  }

  @Test
  void aLaterStartHasAGreaterIncarnationWhateverItsRandomBits() {
    long earlier = ConnectorSettings.incarnation(1_796_000_000_000L, 0xFFFF);
    long later = ConnectorSettings.incarnation(1_796_000_000_001L, 0);

    assertThat(ConnectorSettings.isLaterIncarnation(later, earlier)).isTrue();
    assertThat(ConnectorSettings.isLaterIncarnation(earlier, later)).isFalse();
    assertThat(ConnectorSettings.isLaterIncarnation(later, later)).isFalse();
  }

  @Test
  void incarnationsAreComparedAsUnsignedValues() {
    assertThat(ConnectorSettings.isLaterIncarnation(0x8000_0000_0000_0000L, Long.MAX_VALUE))
        .isTrue();
  }

  @Test
  void epochMillisecondsBeyondFortyEightBitsAreRefused() {
    assertThatThrownBy(() -> ConnectorSettings.incarnation(1L << 48, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("48 bits");
    assertThatThrownBy(() -> ConnectorSettings.incarnation(-1, 0))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void everyStartInOneJvmDrawsAGreaterIncarnationThanTheOneBefore() {
    long before = System.currentTimeMillis();
    long previous = builder().build().incarnation();
    for (int i = 0; i < 1000; i++) {
      long next = builder().build().incarnation();
      assertThat(ConnectorSettings.isLaterIncarnation(next, previous)).as("draw %d", i).isTrue();
      previous = next;
    }
    long after = System.currentTimeMillis();

    assertThat(previous >>> 16).isBetween(before, after + 1);
  }
}
