package io.kvbridge.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.LoadFailurePolicy;
import io.kvbridge.spi.Role;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
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
              assertThat(properties.handshake().address()).isEqualTo("local");
              assertThat(properties.handshake().timeout()).isEqualTo(Duration.ofSeconds(5));
              assertThat(properties.loadFailurePolicy()).isEqualTo(LoadFailurePolicy.FAIL);
              assertThat(properties.nixl().backends()).containsExactly("UCX");
              assertThat(properties.nixl().memory()).isEqualTo(KvBridgeProperties.Nixl.Memory.AUTO);
              assertThat(properties.nixl().pluginDir()).isNull();
              assertThat(properties.nixl().home()).isNull();
              assertThat(properties.properties()).isEmpty();
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
            "kvbridge.handshake.address=tcp://127.0.0.1:0",
            "kvbridge.handshake.timeout=4s")
        .run(
            context -> {
              ConnectorSettings settings = context.getBean(KvConnectors.class).create().settings();
              assertThat(settings.type()).isEqualTo("fake");
              assertThat(settings.engineId()).isEqualTo("decode-7");
              assertThat(settings.role()).isEqualTo(Role.CONSUMER);
              assertThat(settings.leaseTerms().duration()).isEqualTo(Duration.ofSeconds(20));
              assertThat(settings.leaseTerms().maxLifetime()).isEqualTo(Duration.ofSeconds(90));
              assertThat(settings.heartbeatInterval()).isEqualTo(Duration.ofSeconds(3));
              assertThat(settings.safetyMargin()).isEqualTo(Duration.ofMillis(1500));
              assertThat(settings.acksRequired()).isEqualTo(2);
              assertThat(settings.replyTimeout()).isEqualTo(Duration.ofSeconds(7));
              assertThat(settings.handshakeAddress()).hasToString("tcp://127.0.0.1:0");
              assertThat(settings.handshakeTimeout()).isEqualTo(Duration.ofSeconds(4));
            });
  }

  @Test
  void nixlGroupAndFreeFormPropertiesBecomeConnectorProperties() {
    runner
        .withPropertyValues(
            "kvbridge.nixl.backends=UCX,GDS",
            "kvbridge.nixl.memory=vram",
            "kvbridge.nixl.plugin-dir=/opt/nixl/plugins",
            "kvbridge.nixl.home=/opt/nixl",
            "kvbridge.properties.fake.fabric=properties-test",
            "kvbridge.properties.ucx.tls=rc")
        .run(
            context ->
                assertThat(
                        context
                            .getBean(KvConnectors.class)
                            .create()
                            .settings()
                            .properties()
                            .asMap())
                    .containsExactlyInAnyOrderEntriesOf(
                        Map.of(
                            "nixl.backends", "UCX,GDS",
                            "nixl.memory", "vram",
                            "nixl.plugin-dir", Path.of("/opt/nixl/plugins").toString(),
                            "nixl.home", Path.of("/opt/nixl").toString(),
                            "fake.fabric", "properties-test",
                            "ucx.tls", "rc")));
  }

  @Test
  void unsetNixlDirectoriesAreLeftOutOfConnectorProperties() {
    runner.run(
        context ->
            assertThat(context.getBean(KvConnectors.class).create().settings().properties().asMap())
                .containsOnlyKeys("nixl.backends", "nixl.memory"));
  }

  @Test
  void enumValuesBindWhateverTheirCase() {
    runner
        .withPropertyValues(
            "kvbridge.role=PRODUCER",
            "kvbridge.load-failure-policy=recompute",
            "kvbridge.nixl.memory=DRAM")
        .run(
            context -> {
              KvBridgeProperties properties = context.getBean(KvBridgeProperties.class);
              assertThat(properties.role()).isEqualTo(Role.PRODUCER);
              assertThat(properties.loadFailurePolicy()).isEqualTo(LoadFailurePolicy.RECOMPUTE);
              assertThat(properties.nixl().memory()).isEqualTo(KvBridgeProperties.Nixl.Memory.DRAM);
            });
  }

  @Test
  void backendsBindFromAnIndexedList() {
    runner
        .withPropertyValues("kvbridge.nixl.backends[0]=GDS", "kvbridge.nixl.backends[1]=UCX")
        .run(
            context ->
                assertThat(context.getBean(KvBridgeProperties.class).nixl().backends())
                    .isEqualTo(List.of("GDS", "UCX")));
  }

  @org.springframework.boot.context.properties.EnableConfigurationProperties(
      KvBridgeProperties.class)
  static class PropertiesOnly {}
}
