package io.kvbridge.discovery.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.spi.InvalidSettingException;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Each setting is checked once, and refused under the name it is configured by. */
class EtcdDiscoverySettingsTest {

  private final EtcdDiscoverySettings settings =
      EtcdDiscoverySettings.of(List.of("http://127.0.0.1:2379", "http://etcd-1:2379"));

  @Test
  void defaultsRegisterUnderKvbridgeForFiveSecondsAndRefreshEverySecond() {
    assertThat(settings.endpoints())
        .containsExactly(URI.create("http://127.0.0.1:2379"), URI.create("http://etcd-1:2379"));
    assertThat(settings.engineKey("prefill-0")).isEqualTo("/kvbridge/engines/prefill-0");
    assertThat(settings.ttl()).isEqualTo(Duration.ofSeconds(5));
    assertThat(settings.tick()).isEqualTo(Duration.ofSeconds(1));
    assertThat(settings.requestTimeout()).isEqualTo(Duration.ofSeconds(2));
  }

  @Test
  void leaseIsRenewedAtLeastThreeTimesPerTimeToLive() {
    EtcdDiscoverySettings shortLived = settings.withTtl(Duration.ofSeconds(1));

    assertThat(shortLived.tick()).isEqualTo(Duration.ofMillis(333).plusNanos(333_333));
    assertThat(shortLived.requestTimeout()).isEqualTo(Duration.ofMillis(500));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "127.0.0.1:2379",
        "https://etcd:2379",
        "http://etcd",
        "http://etcd:2379/v3",
        "http://user@etcd:2379",
        "http://etcd:99999",
        "tcp://etcd:2379",
        " ",
        "http://[::1:2379"
      })
  void malformedEndpointIsRefusedNamingTheSettingAndTheValue(String endpoint) {
    assertThatThrownBy(() -> EtcdDiscoverySettings.of(List.of("http://etcd-0:2379", endpoint)))
        .isInstanceOf(InvalidSettingException.class)
        .hasMessageContaining("'" + endpoint.strip())
        .hasMessageContaining("write http://host:port")
        .extracting(e -> ((InvalidSettingException) e).setting())
        .isEqualTo("discovery.etcd.endpoints");
  }

  @Test
  void noEndpointIsRefused() {
    assertThatThrownBy(() -> EtcdDiscoverySettings.of(List.of()))
        .isInstanceOf(InvalidSettingException.class)
        .hasMessage(
            "discovery.etcd.endpoints must name at least one etcd endpoint, e.g."
                + " http://etcd:2379");
  }

  @ParameterizedTest
  @ValueSource(longs = {0, 500, 1500})
  void timeToLiveThatIsNotWholeSecondsFromOneIsRefused(long millis) {
    assertThatThrownBy(() -> settings.withTtl(Duration.ofMillis(millis)))
        .isInstanceOf(InvalidSettingException.class)
        .hasMessageContaining("discovery.etcd.ttl (")
        .hasMessageContaining("must be a whole number of seconds, at least 1s");
  }

  @Test
  void refreshIntervalMustBePositive() {
    assertThatThrownBy(() -> settings.withRefreshInterval(Duration.ZERO))
        .isInstanceOf(InvalidSettingException.class)
        .hasMessage("discovery.etcd.refresh-interval (0s) must be positive, e.g. 1s");
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "kvbridge", "/kvbridge/", "/kv bridge", "//kvbridge", "/"})
  void malformedPrefixIsRefused(String prefix) {
    assertThatThrownBy(() -> settings.withPrefix(prefix))
        .isInstanceOf(InvalidSettingException.class)
        .hasMessageStartingWith("discovery.etcd.prefix '" + prefix + "' is not a key prefix");
  }

  @Test
  void prefixMayHaveSeveralSegments() {
    assertThat(settings.withPrefix("/fleet-a/kvbridge").engineKey("decode-3"))
        .isEqualTo("/fleet-a/kvbridge/engines/decode-3");
  }
}
