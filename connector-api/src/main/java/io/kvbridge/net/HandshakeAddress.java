package io.kvbridge.net;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.Objects;
import java.util.Optional;

/**
 * Where an engine answers handshakes: {@link Local} (an engine in this JVM) or {@link Tcp} (a host
 * and port). Written as {@code local}, {@code local://name} or {@code tcp://host:port}; {@link
 * #parse} reads these forms and {@link #toString()} writes them back, canonically, so a written
 * address parses to an equal one.
 *
 * <p>Immutable; safe for use from any thread.
 */
public sealed interface HandshakeAddress {

  /** The accepted forms, as error messages list them. */
  String FORMS =
      "'local' or 'local://name' (engines in one JVM) or 'tcp://host:port' (port 0 picks a free"
          + " one when serving)";

  /**
   * Reads {@code text} in one of the forms {@code local}, {@code local://name} or {@code
   * tcp://host:port}.
   *
   * @throws IllegalArgumentException whose message starts with the quoted text and names the
   *     accepted forms
   */
  static HandshakeAddress parse(String text) {
    Objects.requireNonNull(text, "text");
    if (text.equals("local")) {
      return new Local(Optional.empty());
    }
    if (text.startsWith(Local.SCHEME) && !text.substring(Local.SCHEME.length()).isBlank()) {
      return new Local(Optional.of(text.substring(Local.SCHEME.length())));
    }
    if (text.startsWith(Tcp.SCHEME)) {
      try {
        URI uri = new URI(text);
        if (uri.getHost() != null
            && uri.getPort() >= 0
            && uri.getRawUserInfo() == null
            && uri.getRawPath().isEmpty()
            && uri.getRawQuery() == null
            && uri.getRawFragment() == null) {
          return new Tcp(uri.getHost(), uri.getPort());
        }
      } catch (URISyntaxException | IllegalArgumentException e) {
        // reported below, with the accepted forms
      }
    }
    String shown = text.length() > 64 ? text.substring(0, 64) + "…" : text;
    throw new IllegalArgumentException("'" + shown + "' is not an address; use " + FORMS);
  }

  /** The address written in its canonical form, e.g. {@code tcp://127.0.0.1:9000}. */
  @Override
  String toString();

  /**
   * An engine in this JVM.
   *
   * @param name the name the engine is reached by; when empty, a server is named after its engine
   *     id ({@code local} configures that)
   */
  record Local(Optional<String> name) implements HandshakeAddress {

    static final String SCHEME = "local://";

    /** Rejects a blank name. */
    public Local {
      Objects.requireNonNull(name, "name");
      if (name.isPresent() && name.get().isBlank()) {
        throw new IllegalArgumentException("a local handshake address needs a non-blank name");
      }
    }

    /** The address {@code local://name}. */
    public static Local named(String name) {
      return new Local(Optional.of(name));
    }

    @Override
    public String toString() {
      return name.map(n -> SCHEME + n).orElse("local");
    }
  }

  /**
   * An engine reached over TCP.
   *
   * @param host a host name or IP address literal, IPv6 without brackets
   * @param port 0 to 65535; 0 asks a server for a free port
   */
  record Tcp(String host, int port) implements HandshakeAddress {

    static final String SCHEME = "tcp://";

    /** Rejects a blank host and a port outside 0..65535; strips an IPv6 literal's brackets. */
    public Tcp {
      Objects.requireNonNull(host, "host");
      if (host.startsWith("[") && host.endsWith("]")) {
        host = host.substring(1, host.length() - 1);
      }
      if (host.isBlank()) {
        throw new IllegalArgumentException("a tcp handshake address needs a host");
      }
      if (port < 0 || port > 65_535) {
        throw new IllegalArgumentException(
            "a tcp handshake address needs a port from 0 to 65535, got " + port);
      }
    }

    @Override
    public String toString() {
      return SCHEME + (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }
  }
}
