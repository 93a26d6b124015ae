package io.kvbridge.spring;

import static io.kvbridge.spring.StartupFailures.invalidProperty;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

class KvBridgePropertiesValidationTest {

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(AutoConfigurations.of(KvBridgeAutoConfiguration.class));

  private void assertRejected(String property, String message, String... values) {
    runner
        .withPropertyValues(values)
        .run(
            context -> {
              InvalidKvBridgePropertyException e = invalidProperty(context);
              assertThat(e.property()).isEqualTo(property);
              assertThat(e.getMessage()).isEqualTo(message);
            });
  }

  @Test
  void shortHandshakeSecretIsRejectedWithoutQuotingIt() {
    assertRejected(
        "kvbridge.handshake.secret",
        "kvbridge.handshake.secret must be at least 16 bytes of UTF-8, got 7 (the value is not"
            + " shown)",
        "kvbridge.handshake.secret=hunter2");
  }

  @Test
  void handshakePropertiesNeverShowTheSecret() {
    KvBridgeProperties.Handshake handshake =
        new KvBridgeProperties.Handshake(
            "local", java.time.Duration.ofSeconds(5), "a secret of some length");

    assertThat(handshake.toString()).doesNotContain("a secret").contains("redacted");
  }

  @Test
  void maxLoadsPerProducerBelowOneIsRejected() {
    assertRejected(
        "kvbridge.consumer.max-loads-per-producer",
        "kvbridge.consumer.max-loads-per-producer (0) must be at least 1",
        "kvbridge.consumer.max-loads-per-producer=0");
  }

  @Test
  void aStagingAreaBelowThirtyTwoMebibytesIsRejected() {
    assertRejected(
        "kvbridge.consumer.staging-bytes",
        "kvbridge.consumer.staging-bytes (1048576 bytes) must be at least 32 MiB",
        "kvbridge.consumer.staging-bytes=1MB");
  }

  @Test
  void aStreamingThresholdBelowOneTokenIsRejected() {
    assertRejected(
        "kvbridge.streaming.min-tokens",
        "kvbridge.streaming.min-tokens (0) must be at least 1, e.g. 128",
        "kvbridge.streaming.min-tokens=0");
  }

  @Test
  void aProgressIntervalBeyondAHundredMillisecondsIsRejected() {
    assertRejected(
        "kvbridge.progress-interval",
        "kvbridge.progress-interval (1s) must be 0s (no progress thread) to 100ms, e.g. 500us",
        "kvbridge.progress-interval=1s");
  }

  @Test
  void maxLifetimeShorterThanTheLeaseIsRejected() {
    assertRejected(
        "kvbridge.lease.max-lifetime",
        "kvbridge.lease.max-lifetime (10s) must be at least the lease duration (30s)",
        "kvbridge.lease.max-lifetime=10s");
  }

  @Test
  void heartbeatIntervalNotShorterThanTheLeaseIsRejected() {
    assertRejected(
        "kvbridge.lease.heartbeat-interval",
        "kvbridge.lease.heartbeat-interval (40s) must be shorter than the lease duration (30s),"
            + " or leases expire between heartbeats",
        "kvbridge.lease.heartbeat-interval=40s");
  }

  @Test
  void safetyMarginNotShorterThanTheLeaseIsRejected() {
    assertRejected(
        "kvbridge.lease.safety-margin",
        "kvbridge.lease.safety-margin (30s) must be at least 0s and shorter than the lease"
            + " duration (30s)",
        "kvbridge.lease.safety-margin=30s");
  }

  @Test
  void negativeSafetyMarginIsRejected() {
    assertRejected(
        "kvbridge.lease.safety-margin",
        "kvbridge.lease.safety-margin (-1s) must be at least 0s and shorter than the lease"
            + " duration (30s)",
        "kvbridge.lease.safety-margin=-1s");
  }

  @Test
  void zeroSafetyMarginIsAccepted() {
    runner
        .withPropertyValues("kvbridge.lease.safety-margin=0s")
        .run(context -> assertThat(context).hasNotFailed());
  }

  @Test
  void zeroLeaseDurationIsRejected() {
    assertRejected(
        "kvbridge.lease.duration",
        "kvbridge.lease.duration (0s) must be positive, e.g. 5s or 500ms",
        "kvbridge.lease.duration=0s");
  }

  @Test
  void negativeMaxLifetimeIsRejected() {
    assertRejected(
        "kvbridge.lease.max-lifetime",
        "kvbridge.lease.max-lifetime (-2m) must be positive, e.g. 5s or 500ms",
        "kvbridge.lease.max-lifetime=-2m");
  }

  @Test
  void zeroHeartbeatIntervalIsRejected() {
    assertRejected(
        "kvbridge.lease.heartbeat-interval",
        "kvbridge.lease.heartbeat-interval (0s) must be positive, e.g. 5s or 500ms",
        "kvbridge.lease.heartbeat-interval=0ms");
  }

  @Test
  void zeroSweepIntervalIsRejected() {
    assertRejected(
        "kvbridge.lease.sweep-interval",
        "kvbridge.lease.sweep-interval (0s) must be positive, e.g. 5s or 500ms",
        "kvbridge.lease.sweep-interval=0s");
  }

  @Test
  void negativeReplyTimeoutIsRejected() {
    assertRejected(
        "kvbridge.reply-timeout",
        "kvbridge.reply-timeout (-500ms) must be positive, e.g. 5s or 500ms",
        "kvbridge.reply-timeout=-500ms");
  }

  @Test
  void zeroHandshakeTimeoutIsRejected() {
    assertRejected(
        "kvbridge.handshake.timeout",
        "kvbridge.handshake.timeout (0s) must be positive, e.g. 5s or 500ms",
        "kvbridge.handshake.timeout=0s");
  }

  @Test
  void acksRequiredBelowOneIsRejected() {
    assertRejected(
        "kvbridge.lease.acks-required",
        "kvbridge.lease.acks-required (0) must be at least 1",
        "kvbridge.lease.acks-required=0");
  }

  @Test
  void blankEngineIdIsRejected() {
    assertRejected(
        "kvbridge.engine-id",
        "kvbridge.engine-id must not be blank; set it to this engine's unique name",
        "kvbridge.engine-id=  ");
  }

  @Test
  void blankConnectorTypeIsRejected() {
    assertRejected(
        "kvbridge.connector.type",
        "kvbridge.connector.type must not be blank; set it to a connector type such as fake",
        "kvbridge.connector.type= ");
  }

  @Test
  void unknownConnectorTypeIsRejectedWithTheKnownTypes() {
    assertRejected(
        "kvbridge.connector.type",
        "kvbridge.connector.type 'foo' is unknown; known types: fake, unavailable"
            + " (a type is known when its connector's jar is on the class path)",
        "kvbridge.connector.type=foo");
  }

  @Test
  void handshakeAddressThatIsNeitherLocalNorTcpIsRejected() {
    assertRejected(
        "kvbridge.handshake.address",
        "kvbridge.handshake.address 'udp://host:1' is not an address; use 'local' or"
            + " 'local://name' (engines in one JVM) or 'tcp://host:port' (port 0 picks a free one"
            + " when serving)",
        "kvbridge.handshake.address=udp://host:1");
  }

  @Test
  void tcpHandshakeAddressWithoutPortIsRejected() {
    assertRejected(
        "kvbridge.handshake.address",
        "kvbridge.handshake.address 'tcp://host' is not an address; use 'local' or"
            + " 'local://name' (engines in one JVM) or 'tcp://host:port' (port 0 picks a free one"
            + " when serving)",
        "kvbridge.handshake.address=tcp://host");
  }

  @Test
  void unknownConnectorPropertyIsRejectedWithTheKnownOnes() {
    assertRejected(
        "kvbridge.fake.fabrik",
        "kvbridge.fake.fabrik is unknown; known: fake.fabric, fake.shared-dir",
        "kvbridge.fake.fabrik=demo");
  }

  @Test
  void blankConnectorPropertyIsRejected() {
    assertRejected(
        "kvbridge.fake.shared-dir",
        "kvbridge.fake.shared-dir '' is not a file system path",
        "kvbridge.fake.shared-dir=");
  }

  @Test
  void connectorPropertiesThatContradictEachOtherAreRejected() {
    assertRejected(
        "kvbridge.fake.fabric",
        "kvbridge.fake.fabric cannot be set together with fake.shared-dir; set one of them, not"
            + " both",
        "kvbridge.fake.fabric=demo",
        "kvbridge.fake.shared-dir=/tmp/kvbridge-validation-test");
  }

  @Test
  void freeFormPropertyIsRejectedNamingWhereToSetIt() {
    assertRejected(
        "kvbridge.properties.nixl.memory",
        "kvbridge.properties.nixl.memory is not read: a connector's properties are set under"
            + " kvbridge.<type>., here kvbridge.nixl.memory",
        "kvbridge.properties.nixl.memory=vram");
  }
}
