package io.kvbridge.spring.dashboard;

import io.kvbridge.spring.InvalidKvBridgePropertyException;
import io.kvbridge.time.DurationText;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The operators' dashboard, under the prefix {@code kvbridge.dashboard}; checked when bound: an
 * invalid value stops start-up with an {@link InvalidKvBridgePropertyException} naming the
 * property.
 *
 * @param enabled Whether this web application serves the dashboard at '/kvbridge/dashboard'. It
 *     reads the 'kvbridge' management endpoint on the same server, which must be exposed over HTTP.
 * @param pollInterval How often the page reads the 'kvbridge' endpoint, from 100ms to 1m; each read
 *     is one request.
 * @param historySize How many reads the page's charts keep, from 10 to 3600: the charts show the
 *     last 'history-size' times 'poll-interval' (by default 5 minutes).
 */
@ConfigurationProperties("kvbridge.dashboard")
public record DashboardProperties(
    @DefaultValue("false") boolean enabled,
    @DefaultValue("1s") Duration pollInterval,
    @DefaultValue("300") int historySize) {

  /** The shortest poll interval: faster would load the server for no one's eyes. */
  public static final Duration MIN_POLL_INTERVAL = Duration.ofMillis(100);

  /** The longest poll interval: slower would no longer show rates. */
  public static final Duration MAX_POLL_INTERVAL = Duration.ofMinutes(1);

  /** The fewest reads the charts keep. */
  public static final int MIN_HISTORY_SIZE = 10;

  /** The most reads the charts keep: an hour at one read a second, a few hundred kilobytes. */
  public static final int MAX_HISTORY_SIZE = 3600;

  private static final String POLL_INTERVAL = "kvbridge.dashboard.poll-interval";
  private static final String HISTORY_SIZE = "kvbridge.dashboard.history-size";

  /** Checks the poll interval and the history size. */
  public DashboardProperties {
    requireInRange(pollInterval);
    if (historySize < MIN_HISTORY_SIZE || historySize > MAX_HISTORY_SIZE) {
      throw new InvalidKvBridgePropertyException(
          HISTORY_SIZE,
          HISTORY_SIZE
              + " ("
              + historySize
              + ") must be from "
              + MIN_HISTORY_SIZE
              + " to "
              + MAX_HISTORY_SIZE
              + ", e.g. 300");
    }
  }

  private static void requireInRange(@Nullable Duration value) {
    if (value == null) {
      throw new InvalidKvBridgePropertyException(POLL_INTERVAL, POLL_INTERVAL + " must be set");
    }
    if (value.compareTo(MIN_POLL_INTERVAL) < 0 || value.compareTo(MAX_POLL_INTERVAL) > 0) {
      throw new InvalidKvBridgePropertyException(
          POLL_INTERVAL,
          POLL_INTERVAL
              + " ("
              + DurationText.of(value)
              + ") must be from "
              + DurationText.of(MIN_POLL_INTERVAL)
              + " to "
              + DurationText.of(MAX_POLL_INTERVAL)
              + ", e.g. 1s");
    }
  }
}
