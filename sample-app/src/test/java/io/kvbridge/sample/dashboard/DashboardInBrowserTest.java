package io.kvbridge.sample.dashboard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

import io.kvbridge.sample.HttpApi;
import io.kvbridge.sample.browser.HeadlessChromium;
import io.kvbridge.sample.browser.RequiresChromium;
import io.kvbridge.sample.dashboard.DashboardPage.Reading;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import tools.jackson.databind.json.JsonMapper;

/**
 * The dashboard in a real headless Chromium, on the all-in-one sample with requests flowing through
 * the router (a fifth of them dropped after prefill, so leases also expire): what the page shows is
 * what the {@code kvbridge} endpoint says, within what changes between two of its reads.
 *
 * <p>The tests share one page and run in order only so that the screenshot, saved to {@value
 * #SCREENSHOT}, shows a refused input; each asserts on its own.
 */
@SpringBootTest(
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
      "kvbridge.sample.prefill.engine-id=dashboard-prefill",
      "kvbridge.sample.decode.engine-id=dashboard-decode",
      "kvbridge.fake.fabric=dashboard-test",
      "kvbridge.sample.demo.enabled=false",
      "kvbridge.sample.router.drop-after-prefill=0.2",
      "kvbridge.lease.duration=1s",
      "kvbridge.lease.heartbeat-interval=300ms",
      "kvbridge.lease.safety-margin=200ms",
      "kvbridge.lease.sweep-interval=100ms",
      "kvbridge.dashboard.enabled=true",
      "kvbridge.dashboard.poll-interval=250ms",
      "kvbridge.dashboard.history-size=" + DashboardInBrowserTest.HISTORY
    })
@ExtendWith(RequiresChromium.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DashboardInBrowserTest {

  static final int HISTORY = 20;
  static final String SCREENSHOT = "target/dashboard.png";

  private static final String PREFILL = "dashboard-prefill";
  private static final String DECODE = "dashboard-decode";
  private static final String PROMPT =
      "A prompt the dashboard sees refused: long enough for a few blocks of sixteen tokens.";

  @LocalServerPort int port;

  private HttpApi api;
  private HeadlessChromium browser;
  private DashboardPage page;

  @BeforeAll
  void openTheDashboard() {
    api = new HttpApi(port);
    browser = HeadlessChromium.start(1280, 900, Path.of("target/chromium/dashboard-test.log"));
    browser.open("http://127.0.0.1:" + port + "/kvbridge/dashboard");
    page = new DashboardPage(browser);
    await().atMost(Duration.ofSeconds(30)).until(() -> page.read().polls() >= 1);
  }

  @AfterAll
  void closeTheBrowser() {
    if (browser != null) {
      browser.close();
    }
  }

  @Test
  @Order(1)
  void theDashboardIsAtItsDocumentedPath() {
    assertThat(browser.evaluate("location.pathname")).isEqualTo("/kvbridge/dashboard/");
    assertThat(browser.evaluate("document.title")).isEqualTo("kvbridge dashboard");
    assertThat(page.read().state()).isEqualTo("ok");
  }

  @Test
  @Order(2)
  void aForgedLeaseTokenShowsAsAnInputRefusedByThePrefillNodeAndALoadFailedOnTheDecodeNode() {
    EndpointView before = endpoint();
    String refused = PREFILL + "/rejected.WRONG_TOKEN";
    String failed = DECODE + "/loadsFailed";

    HttpApi.Answer answer = api.post("/decode/v1/completions", withForgedToken());

    assertThat(answer.status()).as(answer.body()).isNotEqualTo(200);
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> {
              Reading shown = page.read();
              assertThat(shown.count(refused)).isGreaterThan(before.counter(refused));
              assertThat(shown.count(failed)).isGreaterThan(before.counter(failed));
              assertThat(shown.count("total.rejected"))
                  .isGreaterThan(before.counter("total.rejected"));
            });
    assertThat(page.flagged(refused)).as("%s marked", refused).isTrue();
    assertThat(page.flagged(failed)).as("%s marked", failed).isTrue();
    assertThat(page.flagged("total.rejected")).isTrue();
    assertThat(page.flagged(PREFILL + "/rejected.MALFORMED_MESSAGE")).isFalse();
  }

  @Test
  @Order(3)
  void whileRequestsFlowEveryCountOnThePageLiesBetweenTwoReadsOfTheEndpoint() throws Exception {
    try (RequestStream requests = RequestStream.start(api, 2)) {
      await().atMost(Duration.ofSeconds(30)).until(() -> requests.answered() >= 20);

      Map<String, Long> before = endpoint().counters();
      Reading shown = page.afterTwoMoreReads();
      Map<String, Long> after = endpoint().counters();

      assertThat(before).containsKeys(DECODE + "/readsCompleted", PREFILL + "/leasesEnded.READ");
      before.forEach(
          (key, low) -> assertThat(shown.count(key)).as(key).isBetween(low, after.get(key)));
      assertThat(after.get(DECODE + "/readsCompleted"))
          .isGreaterThan(before.get(DECODE + "/readsCompleted"));
      await()
          .atMost(Duration.ofSeconds(10))
          .untilAsserted(
              () -> {
                Reading now = page.read();
                assertThat(now.number("total.transfersPerSecond")).isPositive();
                assertThat(now.number(DECODE + "/transfersPerSecond")).isPositive();
                assertThat(now.text("total.bandwidth")).matches("[0-9.,]+ (B|KiB|MiB|GiB)/s");
                assertThat(now.number("total.bandwidth")).isPositive();
              });
      // The screenshot shows the charts' whole window.
      await().atMost(Duration.ofSeconds(30)).until(() -> page.read().polls() >= HISTORY + 2);
      browser.screenshot(Path.of(SCREENSHOT));
    }
    assertThat(Files.readAllBytes(Path.of(SCREENSHOT)))
        .startsWith(0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n');
  }

  @Test
  @Order(4)
  void onceRequestsStopThePageShowsExactlyWhatTheEndpointSays() {
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              EndpointView before = endpoint();
              assertThat(before.quiet()).as("no live lease, no load in flight").isTrue();
              Reading shown = page.afterTwoMoreReads();
              EndpointView after = endpoint();
              assertThat(after.shownWhenQuiet()).isEqualTo(before.shownWhenQuiet());
              assertThat(after.clocks()).isEqualTo(before.clocks());

              Map<String, String> exact = new LinkedHashMap<>(shown.values());
              before.clocks().keySet().forEach(exact::remove);
              assertThat(exact).containsExactlyInAnyOrderEntriesOf(before.shownWhenQuiet());
              assertThat(before.clocks()).isNotEmpty();
              before
                  .clocks()
                  .forEach(
                      (key, nanos) ->
                          assertThat(shown.number(key))
                              .as(key)
                              .isCloseTo(nanos / 1e6, within(0.0005)));
            });
  }

  @Test
  @Order(5)
  void eachReadIsOneRequestToTheEndpointAndNothingElse() {
    browser.evaluate("performance.clearResourceTimings()");
    int first = page.read().polls();
    Reading later = page.afterTwoMoreReads();
    later = page.afterTwoMoreReads();

    Object requests =
        browser.evaluate(
            "performance.getEntriesByType('resource').map((e) => new URL(e.name).pathname)");

    assertThat(requests)
        .asInstanceOf(InstanceOfAssertFactories.LIST)
        .containsOnly("/actuator/kvbridge")
        .hasSizeBetween(later.polls() - first - 1, later.polls() - first + 1);
  }

  @Test
  @Order(6)
  void memoryStaysBoundedAsReadsGoOn() {
    await().atMost(Duration.ofSeconds(30)).until(() -> page.read().polls() >= HISTORY + 5);
    Object elements = browser.evaluate("document.getElementsByTagName('*').length");
    page.afterTwoMoreReads();
    page.afterTwoMoreReads();

    assertThat(browser.evaluate("window.kvbridgeDashboard.samples")).isEqualTo(HISTORY);
    assertThat(browser.evaluate("document.getElementsByTagName('*').length")).isEqualTo(elements);
  }

  @Test
  @Order(7)
  void thePageThrewNoScriptError() {
    assertThat(browser.scriptErrors()).isEmpty();
    assertThat(page.read().problem()).isEmpty();
  }

  private EndpointView endpoint() {
    HttpApi.Answer answer = api.get("/actuator/kvbridge");
    assertThat(answer.status()).as(answer.body()).isEqualTo(200);
    return new EndpointView(answer.json());
  }

  /**
   * A decode request carrying a lease the prefill node granted, with one digit of its token off.
   */
  private String withForgedToken() {
    HttpApi.Answer prefilled =
        api.post("/prefill/v1/completions", body(Map.of("do_remote_decode", true)));
    assertThat(prefilled.status()).as(prefilled.body()).isEqualTo(200);
    @SuppressWarnings("unchecked")
    Map<String, Object> params =
        new LinkedHashMap<>((Map<String, Object>) prefilled.json().get("kv_transfer_params"));
    String token = (String) params.get("lease_token");
    params.put("lease_token", (token.charAt(0) == '0' ? "1" : "0") + token.substring(1));
    return body(params);
  }

  private static String body(Map<String, Object> params) {
    return JsonMapper.shared()
        .writeValueAsString(
            Map.of("prompt", PROMPT, "max_tokens", 2, "kv_transfer_params", params));
  }
}
