package io.kvbridge.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.LoadFailurePolicy;
import io.kvbridge.spi.ReadStaging;
import io.kvbridge.spi.Role;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

class KvBridgePropertiesTest {

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(AutoConfigurations.of(KvBridgeAutoConfiguration.class));

  @Test
  void defaultsFollowTheDocumentedValues() {
    new ApplicationContextRunner()
        .withUserConfiguration(PropertiesOnly.class)
        .run(
            context -> {
              KvBridgeProperties properties = context.getBean(KvBridgeProperties.class);
              assertThat(properties.connector().type()).isEqualTo("fake");
              assertThat(properties.role()).isEqualTo(Role.BOTH);
              assertThat(properties.engineId()).isEqualTo("engine-0");
              assertThat(properties.lease().duration()).isEqualTo(Duration.ofSeconds(30));
              assertThat(properties.lease().maxLifetime()).isEqualTo(Duration.ofMinutes(2));
              assertThat(properties.lease().heartbeatInterval()).isEqualTo(Duration.ofSeconds(5));
              assertThat(properties.lease().sweepInterval()).isEqualTo(Duration.ofSeconds(1));
              assertThat(properties.lease().safetyMargin()).isEqualTo(Duration.ofSeconds(2));
              assertThat(properties.lease().acksRequired()).isEqualTo(1);
              assertThat(properties.replyTimeout()).isEqualTo(Duration.ofSeconds(5));
              assertThat(properties.progressInterval())
                  .isEqualTo(ConnectorSettings.DEFAULT_PROGRESS_INTERVAL)
                  .isEqualTo(Duration.ofNanos(500_000));
              assertThat(properties.handshake().address()).isEqualTo("local");
              assertThat(properties.handshake().timeout()).isEqualTo(Duration.ofSeconds(5));
              assertThat(properties.loadFailurePolicy()).isEqualTo(LoadFailurePolicy.FAIL);
            });
  }

  @Test
  void everyPropertyReachesTheConnectorSettings() {
    runner
        .withPropertyValues(
            "kvbridge.role=consumer",
            "kvbridge.engine-id=decode-7",
            "kvbridge.lease.duration=20s",
            "kvbridge.lease.max-lifetime=90s",
            "kvbridge.lease.heartbeat-interval=3s",
            "kvbridge.lease.safety-margin=1500ms",
            "kvbridge.lease.acks-required=2",
            "kvbridge.reply-timeout=7s",
            "kvbridge.progress-interval=2ms",
            "kvbridge.handshake.address=tcp://127.0.0.1:0",
            "kvbridge.handshake.timeout=4s",
            "kvbridge.consumer.staging=never",
            "kvbridge.consumer.staging-bytes=64MB")
        .run(
            context -> {
              ConnectorSettings settings = context.getBean(KvConnectors.class).create().settings();
              assertThat(settings.staging())
                  .isEqualTo(new ReadStaging(ReadStaging.Mode.NEVER, 64L << 20));
              assertThat(settings.type()).isEqualTo("fake");
              assertThat(settings.engineId()).isEqualTo("decode-7");
              assertThat(settings.role()).isEqualTo(Role.CONSUMER);
              assertThat(settings.leaseTerms().duration()).isEqualTo(Duration.ofSeconds(20));
              assertThat(settings.leaseTerms().maxLifetime()).isEqualTo(Duration.ofSeconds(90));
              assertThat(settings.heartbeatInterval()).isEqualTo(Duration.ofSeconds(3));
              assertThat(settings.safetyMargin()).isEqualTo(Duration.ofMillis(1500));
              assertThat(settings.acksRequired()).isEqualTo(2);
              assertThat(settings.replyTimeout()).isEqualTo(Duration.ofSeconds(7));
              assertThat(settings.progressInterval()).isEqualTo(Duration.ofMillis(2));
              assertThat(settings.handshakeAddress()).hasToString("tcp://127.0.0.1:0");
              assertThat(settings.handshakeTimeout()).isEqualTo(Duration.ofSeconds(4));
            });
  }

  @Test
  void propertiesUnderEachKnownConnectorTypeBecomeThatConnectorsProperties(@TempDir Path dir) {
    runner
        .withPropertyValues(
            "kvbridge.fake.shared-dir=" + dir,
            "kvbridge.unavailable.library=/opt/test/lib",
            "kvbridge.unavailable.backend.UCX.mode=none")
        .run(
            context ->
                assertThat(
                        context
                            .getBean(KvConnectors.class)
                            .create()
                            .settings()
                            .properties()
                            .asMap())
                    .isEqualTo(
                        Map.of(
                            "fake.shared-dir", dir.toString(),
                            "unavailable.library", "/opt/test/lib",
                            "unavailable.backend.UCX.mode", "none")));
  }

  @Test
  void propertiesOfATypeWithoutAConnectorOnTheClassPathReachNoConnector() {
    runner
        .withPropertyValues("kvbridge.nixl.memory=dram")
        .run(
            context ->
                assertThat(
                        context
                            .getBean(KvConnectors.class)
                            .create()
                            .settings()
                            .properties()
                            .asMap())
                    .isEmpty());
  }

  @Test
  void enumValuesBindWhateverTheirCase() {
    runner
        .withPropertyValues("kvbridge.role=PRODUCER", "kvbridge.load-failure-policy=recompute")
        .run(
            context -> {
              KvBridgeProperties properties = context.getBean(KvBridgeProperties.class);
              assertThat(properties.role()).isEqualTo(Role.PRODUCER);
              assertThat(properties.loadFailurePolicy()).isEqualTo(LoadFailurePolicy.RECOMPUTE);
            });
  }

  @org.springframework.boot.context.properties.EnableConfigurationProperties(
      KvBridgeProperties.class)
  static class PropertiesOnly {}
}
