package io.kvbridge.discovery.etcd;

import java.util.OptionalInt;

/**
 * What an engine's registration says about its load that the connector does not know: the engine
 * owns its block pool, so it says how many blocks are free. A router reads it to pick a node.
 *
 * <p>Threads: called on the discovery thread, about once per refresh interval per engine; it must
 * answer at once from what the engine knows (e.g. a volatile counter), never wait for the engine.
 */
@FunctionalInterface
public interface EngineLoad {

  /** Knows nothing: registrations publish free blocks as unknown. */
  EngineLoad UNKNOWN = engineId -> OptionalInt.empty();

  /** How many KV blocks engine {@code engineId} has free now, if it says. */
  OptionalInt freeBlocks(String engineId);
}
