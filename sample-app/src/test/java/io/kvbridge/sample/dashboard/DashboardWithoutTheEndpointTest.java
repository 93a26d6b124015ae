package io.kvbridge.sample.dashboard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvbridge.sample.browser.HeadlessChromium;
import io.kvbridge.sample.browser.RequiresChromium;
import io.kvbridge.sample.dashboard.DashboardPage.Reading;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * An application that serves the dashboard but does not expose the {@code kvbridge} endpoint over
 * HTTP: the page, in a real headless Chromium, says so and how to expose it, and reads nothing.
 */
@SpringBootTest(
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
      "kvbridge.sample.prefill.engine-id=dashboard-hidden-prefill",
      "kvbridge.sample.decode.engine-id=dashboard-hidden-decode",
      "kvbridge.fake.fabric=dashboard-hidden-test",
      "kvbridge.sample.demo.enabled=false",
      "kvbridge.dashboard.enabled=true",
      "kvbridge.dashboard.poll-interval=250ms",
      "management.endpoints.web.exposure.include=health"
    })
@ExtendWith(RequiresChromium.class)
class DashboardWithoutTheEndpointTest {

  @LocalServerPort int port;

  @Test
  void thePageSaysTheEndpointIsNotExposedAndHowToExposeIt() {
    try (HeadlessChromium browser =
        HeadlessChromium.start(1280, 600, Path.of("target/chromium/dashboard-hidden-test.log"))) {
      browser.open("http://127.0.0.1:" + port + "/kvbridge/dashboard");
      DashboardPage page = new DashboardPage(browser);

      await()
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(() -> assertThat(page.read().state()).isEqualTo("problem"));
      Reading shown = page.read();

      assertThat(shown.problem())
          .contains("The kvbridge endpoint is not exposed over HTTP")
          .contains("management.endpoints.web.exposure.include");
      assertThat(shown.polls()).isZero();
      assertThat(browser.scriptErrors()).isEmpty();
      browser.screenshot(Path.of("target/dashboard-endpoint-not-exposed.png"));
    }
  }
}
