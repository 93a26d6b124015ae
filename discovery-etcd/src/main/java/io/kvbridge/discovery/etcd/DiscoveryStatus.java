package io.kvbridge.discovery.etcd;

import java.net.URI;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A point-in-time view of discovery, for health checks.
 *
 * @param endpoints etcd's endpoints
 * @param connected whether etcd answers and the watch on the engines' keys runs
 * @param problem why discovery is not healthy, if it is not: etcd is unreachable (since when and
 *     why), or an engine is not registered yet
 * @param registrations each local engine's registration, by engine id
 * @param knownEngines how many engines (local ones included) the view holds
 */
public record DiscoveryStatus(
    List<URI> endpoints,
    boolean connected,
    Optional<String> problem,
    Map<String, RegistrationState> registrations,
    int knownEngines) {

  /** Where one local engine's registration stands. */
  public enum RegistrationState {
    /** The engine has not registered its KV cache yet, so there is nothing to publish. */
    WAITING_FOR_KV_CACHE,
    /** The engine's key is in etcd under a lease this process keeps alive. */
    REGISTERED,
    /** The engine should be registered and is not: etcd is unreachable or refused it. */
    NOT_REGISTERED
  }

  /** Copies the collections. */
  public DiscoveryStatus {
    endpoints = List.copyOf(endpoints);
    registrations = Map.copyOf(registrations);
  }

  /**
   * The status of discovery with {@code endpoints}: not connected when {@code unreachable} says
   * why; otherwise healthy unless a local engine that can be registered is not.
   */
  static DiscoveryStatus of(
      List<URI> endpoints,
      Optional<String> unreachable,
      Collection<Registration> local,
      int knownEngines) {
    Map<String, RegistrationState> states = new LinkedHashMap<>();
    Optional<String> problem = unreachable;
    for (Registration r : local) {
      RegistrationState state =
          !r.ready()
              ? RegistrationState.WAITING_FOR_KV_CACHE
              : r.registered ? RegistrationState.REGISTERED : RegistrationState.NOT_REGISTERED;
      states.put(r.engineId, state);
      if (problem.isEmpty() && state == RegistrationState.NOT_REGISTERED) {
        problem = Optional.of("engine " + r.engineId + " is not registered in etcd yet");
      }
    }
    return new DiscoveryStatus(endpoints, unreachable.isEmpty(), problem, states, knownEngines);
  }

  /** Connected, and every engine that can be registered is. */
  public boolean healthy() {
    return problem.isEmpty();
  }
}
