package io.kvbridge.discovery.etcd;

import java.util.Map;

/**
 * What an engine's registration says about it that kvbridge does not know, as {@link
 * EngineRecord#attributes()}: for example where the engine's HTTP API is, so that a router can
 * build its pools from the registrations. The answer may change while the engine runs (a server
 * learns its port after the engine started): a changed answer is published as the load is.
 *
 * <p>Threads: called on the discovery thread, about once per refresh interval per engine; it must
 * answer at once from what the application knows, never wait. The map must fit {@link
 * EngineRecord}'s limits; one that does not is logged and published as no attributes.
 */
@FunctionalInterface
public interface EngineAttributes {

  /** Says nothing. */
  EngineAttributes NONE = engineId -> Map.of();

  /** What to publish about engine {@code engineId} now. */
  Map<String, String> attributes(String engineId);
}
