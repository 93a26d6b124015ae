package io.kvbridge.sample.dashboard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvbridge.events.PrefixIndex;
import io.kvbridge.events.PrefixIndex.Outcome;
import io.kvbridge.sample.HttpApi;
import io.kvbridge.sample.browser.HeadlessChromium;
import io.kvbridge.sample.browser.RequiresChromium;
import io.kvbridge.sample.dashboard.DashboardPage.Reading;
import io.kvbridge.spring.events.PrefixIndexStatus;
import io.kvbridge.spring.events.PrefixIndexView;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Primary;

/**
 * The dashboard's prefix index panel in a real headless Chromium, on the all-in-one sample with a
 * {@link PrefixIndexView} of known figures (primary, so that it is the one shown whatever the
 * sample declares): the panel shows them, the hit rate since the last read once requests are
 * routed, and hides when the endpoint has no prefix index.
 *
 * <p>The tests share one page and run in order: the last one changes what the page reads.
 */
@SpringBootTest(
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
      "kvbridge.sample.prefill.engine-id=dashboard-prefix-prefill",
      "kvbridge.sample.decode.engine-id=dashboard-prefix-decode",
      "kvbridge.fake.fabric=dashboard-prefix-test",
      "kvbridge.sample.demo.enabled=false",
      "kvbridge.dashboard.enabled=true",
      "kvbridge.dashboard.poll-interval=250ms"
    })
@ExtendWith(RequiresChromium.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DashboardPrefixIndexInBrowserTest {

  static final String SCREENSHOT = "target/dashboard-prefix-index.png";

  @LocalServerPort int port;

  @Autowired KnownPrefixIndex index;

  private HeadlessChromium browser;
  private DashboardPage page;

  @TestConfiguration
  static class WithAPrefixIndex {
    @Bean
    @Primary
    KnownPrefixIndex knownPrefixIndex() {
      return new KnownPrefixIndex();
    }
  }

  @BeforeAll
  void openTheDashboard() {
    browser =
        HeadlessChromium.start(1280, 900, Path.of("target/chromium/dashboard-prefix-test.log"));
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
  void thePanelShowsWhatTheIndexHoldsAndWhatBecameOfItsEvents() {
    Reading shown = page.afterTwoMoreReads();

    assertThat(panelShown()).isTrue();
    assertThat(shown.values())
        .containsEntry("prefixIndex.blocks", "12,345")
        .containsEntry("prefixIndex.engines", "3")
        .containsEntry("prefixIndex.hitRate", "66.7%")
        .containsEntry("prefixIndex.requests", "200 of 300 requests")
        .containsEntry("prefixIndex.hitRateRecent", "\u2013")
        .containsEntry("prefixIndex.requestsRecent", "no new request")
        .containsEntry("prefixIndex.applied", "1,500")
        .containsEntry("prefixIndex.repeated", "7")
        .containsEntry("prefixIndex.lost", "2")
        // UNKNOWN_ENGINE, WRONG_INCARNATION, NOT_SYNCED and WRONG_MODEL, and those refused before
        .containsEntry("prefixIndex.refused", String.valueOf(1 + 3 + 4 + 5 + 6))
        .containsEntry("prefixIndex.unauthenticated", "8")
        .containsEntry("prefixIndex.unreachable", "9")
        .containsEntry("prefixIndex.resyncs", "10");
    assertThat(text("prefix-blocks")).isEqualTo("12,345");
    assertThat(text("prefix-hit-rate")).isEqualTo("66.7%");
    assertThat(browser.evaluate("document.getElementById('prefix-refused-figure').title"))
        .isEqualTo(
            "Refused by the index: UNKNOWN_ENGINE 1, WRONG_INCARNATION 3, NOT_SYNCED 4,"
                + " WRONG_MODEL 5; refused before it (malformed, or naming another engine): 6");
    browser.screenshot(Path.of(SCREENSHOT));
  }

  @Test
  @Order(2)
  void whatThePanelShowsIsWhatTheEndpointSays() {
    Reading shown = page.afterTwoMoreReads();
    HttpApi.Answer answer = new HttpApi(port).get("/actuator/kvbridge");
    assertThat(answer.status()).as(answer.body()).isEqualTo(200);

    Map<String, String> said =
        new LinkedHashMap<>(new EndpointView(answer.json()).shownWhenQuiet());
    said.keySet().removeIf(key -> !key.startsWith("prefixIndex."));

    assertThat(said).hasSize(13);
    assertThat(shown.values()).containsAllEntriesOf(said);
  }

  @Test
  @Order(3)
  void lostRefusedUnauthenticatedAndUnreachableAreMarkedButAppliedIsNot() {
    page.afterTwoMoreReads();

    assertThat(page.flagged("prefixIndex.lost")).isTrue();
    assertThat(page.flagged("prefixIndex.refused")).isTrue();
    assertThat(page.flagged("prefixIndex.unauthenticated")).isTrue();
    assertThat(page.flagged("prefixIndex.unreachable")).isTrue();
    assertThat(page.flagged("prefixIndex.applied")).isFalse();
    assertThat(page.flagged("prefixIndex.resyncs")).isFalse();
  }

  @Test
  @Order(4)
  void whileRequestsAreRoutedTheHitRateSinceTheLastReadCountsOnlyTheNewOnes() {
    index.startRouting();
    try {
      await()
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(
              () -> {
                Reading shown = page.read();
                assertThat(shown.text("prefixIndex.hitRateRecent")).isEqualTo("80.0%");
                long[] recent = ofRequests(shown.text("prefixIndex.requestsRecent"));
                assertThat(recent[0] * 10).isEqualTo(recent[1] * 8);
                long[] all = ofRequests(shown.text("prefixIndex.requests"));
                assertThat(all[1]).isGreaterThan(300);
                assertThat(shown.text("prefixIndex.hitRate"))
                    .isEqualTo(EndpointView.percent(all[0], all[1]));
              });
    } finally {
      index.stopRouting();
    }
  }

  @Test
  @Order(5)
  void thePanelHidesWhenTheEndpointHasNoPrefixIndex() {
    // What the page reads from then on, whatever the sample's beans: the endpoint's answer without
    // its prefix index (absent, then null).
    browser.evaluate(
        """
        (() => {
          const read = window.fetch;
          window.prefixIndexReplacement = undefined;
          window.fetch = async (...args) => {
            const response = await read(...args);
            if (!String(args[0]).includes('/actuator/kvbridge')) {
              return response;
            }
            const status = await response.json();
            if (window.prefixIndexReplacement === undefined) {
              delete status.prefixIndex;
            } else {
              status.prefixIndex = window.prefixIndexReplacement;
            }
            return new Response(JSON.stringify(status), {
              status: response.status,
              headers: { 'Content-Type': 'application/json' },
            });
          };
        })()
        """);
    page.afterTwoMoreReads();

    assertThat(panelShown()).as("without prefixIndex").isFalse();
    assertThat(page.read().values()).doesNotContainKey("prefixIndex.blocks");

    browser.evaluate("window.prefixIndexReplacement = null");
    page.afterTwoMoreReads();

    assertThat(panelShown()).as("with prefixIndex null").isFalse();
    assertThat(page.read().values()).doesNotContainKey("prefixIndex.blocks");
    assertThat(page.read().state()).isEqualTo("ok");
  }

  @Test
  @Order(6)
  void thePageThrewNoScriptError() {
    assertThat(browser.scriptErrors()).isEmpty();
    assertThat(page.read().problem()).isEmpty();
  }

  private boolean panelShown() {
    return Boolean.TRUE.equals(
        browser.evaluate(
            "(() => { const p = document.getElementById('prefix-index');"
                + " return !p.hidden && p.getClientRects().length > 0; })()"));
  }

  private String text(String id) {
    return (String) browser.evaluate("document.getElementById('" + id + "').textContent");
  }

  /** {@code [part, whole]} of a note such as {@code 8 of 10 requests}. */
  private static long[] ofRequests(String note) {
    Matcher m = Pattern.compile("([0-9,]+) of ([0-9,]+) requests").matcher(note);
    assertThat(m.matches()).as(note).isTrue();
    return new long[] {
      Long.parseLong(m.group(1).replace(",", "")), Long.parseLong(m.group(2).replace(",", ""))
    };
  }

  /**
   * A prefix index of known figures: 300 requests, 200 of them sent for a node's cache, until it
   * {@linkplain #startRouting routes}: then each read counts 10 more requests, 8 of them for a
   * node's cache.
   *
   * <p>Threads: any.
   */
  static final class KnownPrefixIndex implements PrefixIndexView {

    private static final PrefixIndex.Stats STATS =
        new PrefixIndex.Stats(
            Map.of(
                Outcome.APPLIED, 1500L,
                Outcome.REPEATED, 7L,
                Outcome.GAP, 2L,
                Outcome.UNKNOWN_ENGINE, 1L,
                Outcome.WRONG_INCARNATION, 3L,
                Outcome.NOT_SYNCED, 4L,
                Outcome.WRONG_MODEL, 5L),
            10,
            12_345,
            3);

    private final AtomicLong routed = new AtomicLong();
    private volatile boolean routing;

    void startRouting() {
      routing = true;
    }

    void stopRouting() {
      routing = false;
    }

    @Override
    public PrefixIndexStatus prefixIndex() {
      long reads = routing ? routed.incrementAndGet() : routed.get();
      return PrefixIndexStatus.of(STATS, 6, 8, 9, 300 + 10 * reads, 200 + 8 * reads);
    }
  }
}
