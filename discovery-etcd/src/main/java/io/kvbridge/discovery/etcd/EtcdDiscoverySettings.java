package io.kvbridge.discovery.etcd;

import io.kvbridge.spi.InvalidSettingException;
import io.kvbridge.time.DurationText;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * How engines use etcd. Every value is checked here, once: a value discovery cannot run with is
 * refused with an {@link InvalidSettingException} whose setting is the name it is configured by,
 * shown in brackets below (the starter reports it under {@code kvbridge.}).
 *
 * @param endpoints etcd's client URLs, each {@code http://host:port} ({@code
 *     discovery.etcd.endpoints})
 * @param prefix the key prefix under which engines register, as {@code <prefix>/engines/<engine
 *     id>}: starts with {@code /}, does not end with one ({@code discovery.etcd.prefix})
 * @param ttl how long a registration outlives its engine: the etcd lease's time to live, in whole
 *     seconds, at least 1s; peers learn that an engine died at most this long (plus etcd's expiry
 *     check, about half a second) after its last renewal ({@code discovery.etcd.ttl})
 * @param refreshInterval how often an engine's load figures (free blocks, live leases) are
 *     published again when they changed; the lease is renewed every {@link #tick()} ({@code
 *     discovery.etcd.refresh-interval})
 */
public record EtcdDiscoverySettings(
    List<URI> endpoints, String prefix, Duration ttl, Duration refreshInterval) {

  /** The default key prefix. */
  public static final String DEFAULT_PREFIX = "/kvbridge";

  /** The default time to live of a registration. */
  public static final Duration DEFAULT_TTL = Duration.ofSeconds(5);

  /** The default refresh interval. */
  public static final Duration DEFAULT_REFRESH_INTERVAL = Duration.ofSeconds(1);

  private static final Pattern PREFIX = Pattern.compile("(/[A-Za-z0-9._~-]+)+");

  /**
   * Checks every value.
   *
   * @throws InvalidSettingException naming the setting, its value and what is accepted
   */
  public EtcdDiscoverySettings {
    if (endpoints == null || endpoints.isEmpty()) {
      throw new InvalidSettingException(
          "discovery.etcd.endpoints",
          "must name at least one etcd endpoint, e.g. http://etcd:2379");
    }
    endpoints = List.copyOf(endpoints);
    for (URI endpoint : endpoints) {
      checkEndpoint(endpoint);
    }
    if (prefix == null || !PREFIX.matcher(prefix).matches()) {
      throw new InvalidSettingException(
          "discovery.etcd.prefix",
          "'"
              + prefix
              + "' is not a key prefix: write one or more /segments of letters, digits, '.', '_',"
              + " '~' or '-', with no trailing '/', e.g. /kvbridge");
    }
    if (ttl == null
        || ttl.compareTo(Duration.ofSeconds(1)) < 0
        || ttl.getNano() != 0
        || ttl.getSeconds() > Integer.MAX_VALUE) {
      throw new InvalidSettingException(
          "discovery.etcd.ttl",
          "("
              + (ttl == null ? "unset" : DurationText.of(ttl))
              + ") must be a whole number of seconds, at least 1s (etcd leases count in seconds),"
              + " e.g. 5s");
    }
    if (refreshInterval == null || refreshInterval.isNegative() || refreshInterval.isZero()) {
      throw new InvalidSettingException(
          "discovery.etcd.refresh-interval",
          "("
              + (refreshInterval == null ? "unset" : DurationText.of(refreshInterval))
              + ") must be positive, e.g. 1s");
    }
  }

  /**
   * Settings for etcd at {@code endpoints}, written {@code http://host:port}, with the default
   * prefix, time to live and refresh interval.
   *
   * @throws InvalidSettingException naming {@code discovery.etcd.endpoints} if one is malformed
   */
  public static EtcdDiscoverySettings of(List<String> endpoints) {
    return new EtcdDiscoverySettings(
        parseEndpoints(endpoints), DEFAULT_PREFIX, DEFAULT_TTL, DEFAULT_REFRESH_INTERVAL);
  }

  /** A copy with another prefix. */
  public EtcdDiscoverySettings withPrefix(String value) {
    return new EtcdDiscoverySettings(endpoints, value, ttl, refreshInterval);
  }

  /** A copy with another time to live. */
  public EtcdDiscoverySettings withTtl(Duration value) {
    return new EtcdDiscoverySettings(endpoints, prefix, value, refreshInterval);
  }

  /** A copy with another refresh interval. */
  public EtcdDiscoverySettings withRefreshInterval(Duration value) {
    return new EtcdDiscoverySettings(endpoints, prefix, ttl, value);
  }

  /**
   * Parses endpoints written {@code http://host:port}.
   *
   * @throws InvalidSettingException naming {@code discovery.etcd.endpoints}, quoting the first
   *     malformed one
   */
  public static List<URI> parseEndpoints(List<String> endpoints) {
    if (endpoints == null) {
      return List.of();
    }
    List<URI> parsed = new ArrayList<>();
    for (String text : endpoints) {
      URI uri;
      try {
        uri = new URI(text == null ? "" : text.strip());
      } catch (URISyntaxException e) {
        throw malformedEndpoint(text, e);
      }
      checkEndpoint(uri);
      parsed.add(uri);
    }
    return parsed;
  }

  /** The key under which engine {@code engineId} registers. */
  public String engineKey(String engineId) {
    return enginesPrefix() + engineId;
  }

  /** The prefix of every engine's key, ending with {@code /}. */
  public String enginesPrefix() {
    return prefix + "/engines/";
  }

  /**
   * How often the lease is renewed and the load figures compared with what was published: the
   * refresh interval, but at least three times per time to live, so two renewals in a row may fail
   * before the registration expires.
   */
  public Duration tick() {
    Duration third = ttl.dividedBy(3);
    return refreshInterval.compareTo(third) < 0 ? refreshInterval : third;
  }

  /**
   * How long one request to etcd may take before the connection counts as lost: half the time to
   * live, at most 2s.
   */
  public Duration requestTimeout() {
    Duration half = ttl.dividedBy(2);
    return half.compareTo(Duration.ofSeconds(2)) < 0 ? half : Duration.ofSeconds(2);
  }

  private static void checkEndpoint(URI endpoint) {
    if (endpoint == null
        || !"http".equals(endpoint.getScheme())
        || endpoint.getHost() == null
        || endpoint.getPort() < 1
        || endpoint.getPort() > 65_535
        || endpoint.getUserInfo() != null
        || (endpoint.getRawPath() != null && !endpoint.getRawPath().isEmpty())
        || endpoint.getRawQuery() != null
        || endpoint.getRawFragment() != null) {
      throw malformedEndpoint(endpoint == null ? null : endpoint.toString(), null);
    }
  }

  private static InvalidSettingException malformedEndpoint(String text, Throwable cause) {
    return new InvalidSettingException(
        "discovery.etcd.endpoints",
        "'"
            + text
            + "' is not an etcd endpoint: write http://host:port, e.g. http://127.0.0.1:2379"
            + " (TLS is not supported yet)",
        cause);
  }
}
