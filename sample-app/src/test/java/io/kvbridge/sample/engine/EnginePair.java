package io.kvbridge.sample.engine;

import io.kvbridge.fake.FakeTransportProvider;
import io.kvbridge.layout.KvLayout;
import io.kvbridge.lease.LeaseTerms;
import io.kvbridge.runtime.ConnectorRegistry;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.LoadFailurePolicy;
import io.kvbridge.spi.Role;
import io.kvbridge.tck.faults.Faults;
import io.kvbridge.time.ManualClock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * A prefill engine and a decode engine on the fake connector, on a fabric of their own and a shared
 * manual clock, their transports members of one fault group, as a test fixture.
 */
final class EnginePair implements AutoCloseable {

  static final KvLayout LAYOUT = KvLayout.opaque(ToyModel.NAME + ", test", 16, 8, 256);
  static final Duration LEASE = Duration.ofSeconds(10);
  static final Duration SAFETY_MARGIN = Duration.ofSeconds(1);

  final ManualClock clock = new ManualClock();
  final Faults faults = new Faults(1);
  final Engine prefill;
  final Engine decode;

  EnginePair(LoadFailurePolicy decodePolicy) {
    this(decodePolicy, Duration.ofMinutes(1));
  }

  /** A pair whose leases live at most {@code maxLifetime}, renewals included. */
  EnginePair(LoadFailurePolicy decodePolicy, Duration maxLifetime) {
    String name = "engine-test-" + UUID.randomUUID();
    this.prefill = start(name, "p", Role.PRODUCER, LoadFailurePolicy.FAIL, maxLifetime);
    this.decode = start(name, "d", Role.CONSUMER, decodePolicy, maxLifetime);
  }

  private Engine start(
      String fabricName, String kind, Role role, LoadFailurePolicy policy, Duration maxLifetime) {
    ConnectorSettings settings =
        ConnectorSettings.builder(FakeTransportProvider.TYPE, fabricName + "-" + kind)
            .role(role)
            .clock(clock)
            .leaseTerms(new LeaseTerms(LEASE, maxLifetime))
            .safetyMargin(SAFETY_MARGIN)
            .properties(Map.of(FakeTransportProvider.FABRIC, fabricName))
            .build();
    KvConnector connector =
        ConnectorRegistry.of(List.of(new FakeTransportProvider()))
            .create(settings, faults::decorate);
    return new EngineFactory(LAYOUT, policy, Duration.ofMillis(1)).start(connector);
  }

  @Override
  public void close() {
    decode.close();
    prefill.close();
  }
}
