package io.kvbridge.tck.schedule;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.lease.LeaseTerms;
import io.kvbridge.observe.ConnectorObserver;
import io.kvbridge.runtime.ConnectorRegistry;
import io.kvbridge.spi.Availability;
import io.kvbridge.spi.ConnectorProperties;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.Role;
import io.kvbridge.spi.TransportProvider;
import io.kvbridge.tck.faults.Faults;
import io.kvbridge.time.MonotonicClock;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.KvRegions;
import io.kvbridge.transfer.Transport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.Function;

/**
 * Starts the connector of each start of an engine under the same lease terms, from the agents of
 * the connector module under test, one per rank, each wrapped into one {@link Faults} group. Every
 * start draws from the seeded source an incarnation greater than the last, as nodes whose clocks
 * move forward do.
 */
final class EngineStarter {

  static final Duration LEASE = Duration.ofSeconds(10);
  static final Duration MAX_LIFETIME = Duration.ofSeconds(30);
  static final Duration HEARTBEAT = Duration.ofSeconds(3);
  static final Duration SAFETY_MARGIN = Duration.ofSeconds(1);
  static final Duration REPLY_TIMEOUT = Duration.ofSeconds(2);

  private final ConnectorRegistry registry;
  private final Faults faults;
  private final Random random;
  // The incarnation of the latest start of any engine.
  private long incarnations = ConnectorSettings.incarnation(1_796_000_000_000L, 0);

  /**
   * @param transports creates an agent's raw transport from its name
   * @param faults the group every agent joins
   * @param random the seeded source the incarnations are drawn from
   */
  EngineStarter(Function<String, Transport> transports, Faults faults, Random random) {
    this.registry = ConnectorRegistry.of(List.of(new AgentsByName(transports)));
    this.faults = faults;
    this.random = random;
  }

  /**
   * Starts an engine's connector, one agent per rank from the connector module under test, each
   * wrapped into the fault group and added to {@code agents}, by rank.
   */
  KvConnector start(
      String engineId,
      Role role,
      int tpDegree,
      MonotonicClock engineClock,
      ConnectorObserver observer,
      List<Transport> agents) {
    return registry.create(
        settings(engineId, role, tpDegree, engineClock, observer),
        raw -> {
          Transport member = faults.decorate(raw);
          agents.add(member);
          return member;
        });
  }

  /** Allocates and registers every rank's KV cache of {@code connector}; its memories, by rank. */
  static List<KvRegions> registerKvCaches(KvConnector connector, List<KvLayout> layouts) {
    List<KvRegions> memories = new ArrayList<>(layouts.size());
    for (int r = 0; r < layouts.size(); r++) {
      List<KvMemory> regions = connector.worker(r).allocateKvRegions(layouts.get(r));
      memories.add(new KvRegions(layouts.get(r), regions));
      connector.worker(r).registerKvCache(regions, layouts.get(r));
    }
    return List.copyOf(memories);
  }

  private ConnectorSettings settings(
      String engineId,
      Role role,
      int tpDegree,
      MonotonicClock engineClock,
      ConnectorObserver observer) {
    return ConnectorSettings.builder(AgentsByName.TYPE, engineId)
        .role(role)
        .tpDegree(tpDegree)
        .leaseTerms(new LeaseTerms(LEASE, MAX_LIFETIME))
        .heartbeatInterval(HEARTBEAT)
        .safetyMargin(SAFETY_MARGIN)
        .replyTimeout(REPLY_TIMEOUT)
        .incarnation(incarnations += 1 + (random.nextLong() & 0xFFFF))
        .clock(engineClock)
        // Driven step by step on a manual clock: no progress thread between steps
        // (ProgressConformance runs one on the real clock).
        .progressInterval(Duration.ZERO)
        // Streamed requests are as short as any: every one asked for is streamed.
        .streamingMinTokens(1)
        .observer(observer)
        .build();
  }

  /**
   * The agents of the connector module under test, by name, as a connector type of their own: the
   * registry builds each engine's connector around one per rank, named as every type names them.
   */
  private record AgentsByName(Function<String, Transport> byName) implements TransportProvider {
    static final String TYPE = "schedule";

    @Override
    public String type() {
      return TYPE;
    }

    @Override
    public Availability availability(ConnectorProperties properties) {
      return Availability.available();
    }

    @Override
    public Transport create(ConnectorSettings settings, int rank) {
      return byName.apply(TransportProvider.agentName(settings.engineId(), rank));
    }
  }
}
