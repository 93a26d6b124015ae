package io.kvbridge.sample.dashboard;

import static org.awaitility.Awaitility.await;

import io.kvbridge.sample.browser.HeadlessChromium;
import java.time.Duration;
import java.util.Map;

/**
 * The dashboard as a browser shows it, for tests: what its numbers read, keyed by where they are.
 *
 * <p>Threads: one test thread at a time.
 */
final class DashboardPage {

  /**
   * Every element that shows a number or a name the endpoint gave, keyed {@code
   * [engine/][peer/]metric} from its {@code data-*} attributes, with the text it shows, but those
   * in a hidden part of the page; and how far the page is.
   */
  private static final String READ =
      """
      (() => {
        const values = {};
        document.querySelectorAll('[data-metric]').forEach((e) => {
          if (e.closest('[hidden]')) {
            return;
          }
          const key = [e.dataset.engine, e.dataset.peer, e.dataset.metric]
              .filter((part) => part !== undefined).join('/');
          values[key] = e.textContent.trim();
        });
        const problem = document.getElementById('problem');
        return {
          polls: window.kvbridgeDashboard.polls,
          state: document.body.dataset.state,
          problem: problem.hidden ? '' : problem.textContent,
          values,
        };
      })()
      """;

  private final HeadlessChromium browser;

  DashboardPage(HeadlessChromium browser) {
    this.browser = browser;
  }

  /** What the page shows now. */
  Reading read() {
    @SuppressWarnings("unchecked")
    Map<String, Object> page = (Map<String, Object>) browser.evaluate(READ);
    @SuppressWarnings("unchecked")
    Map<String, String> values = (Map<String, String>) page.get("values");
    return new Reading(
        ((Number) page.get("polls")).intValue(),
        (String) page.get("state"),
        (String) page.get("problem"),
        values);
  }

  /**
   * What the page shows once it has read the endpoint twice more: the read it shows then started
   * after this call did.
   */
  Reading afterTwoMoreReads() {
    int polls = read().polls();
    await("two more reads of the endpoint")
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofMillis(25))
        .until(() -> read().polls() >= polls + 2);
    return read();
  }

  /** Whether the element of {@code key} (as in {@link Reading#values}) is marked as bad news. */
  boolean flagged(String key) {
    String[] parts = key.split("/");
    String selector =
        switch (parts.length) {
          case 1 -> "[data-metric=\"" + parts[0] + "\"]";
          case 2 -> "[data-engine=\"" + parts[0] + "\"][data-metric=\"" + parts[1] + "\"]";
          default -> throw new IllegalArgumentException("not an engine's or a total's key: " + key);
        };
    return Boolean.TRUE.equals(
        browser.evaluate("document.querySelector('" + selector + "').classList.contains('bad')"));
  }

  /**
   * What the page shows.
   *
   * @param polls how many times it has read the endpoint
   * @param state {@code loading}, {@code ok} or {@code problem}
   * @param problem the problem it shows, or empty
   * @param values the text of each element that shows a value, by key
   */
  record Reading(int polls, String state, String problem, Map<String, String> values) {

    /** The count shown under {@code key}, e.g. {@code 1,234} as 1234. */
    long count(String key) {
      return Long.parseLong(text(key).replace(",", ""));
    }

    /** The leading number shown under {@code key}: a rate, a bandwidth, a clock offset. */
    double number(String key) {
      String text = text(key).replace("\u2212", "-").replace(",", "").replace("\u00b1", "").trim();
      return Double.parseDouble(text.split(" ")[0]);
    }

    /** The text shown under {@code key}. */
    String text(String key) {
      String text = values.get(key);
      if (text == null) {
        throw new AssertionError("the page shows no " + key + "; it shows " + values.keySet());
      }
      return text;
    }
  }
}
