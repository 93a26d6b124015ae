package io.kvbridge.sample.engine;

import io.kvbridge.fake.FakeTransportProvider;
import io.kvbridge.layout.KvLayout;
import io.kvbridge.lease.LeaseTerms;
import io.kvbridge.runtime.ConnectorRegistry;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.LoadFailurePolicy;
import io.kvbridge.spi.Role;
import io.kvbridge.spi.TransportProvider;
import io.kvbridge.tck.faults.Faults;
import io.kvbridge.time.ManualClock;
import io.kvbridge.transfer.Transport;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.UnaryOperator;

/**
 * A prefill engine and a decode engine on the fake connector, on a fabric of their own and a shared
 * manual clock, the transports {@link FaultScope} names members of one fault group, as a test
 * fixture.
 */
final class EnginePair implements AutoCloseable {

  /** Blocks in each engine's pool. */
  static final int BLOCKS = 256;

  /** One rank, 16-token blocks, no prefix cache. */
  static final EngineShape SHAPE = shape(1, 16, 0);

  static final Duration LEASE = Duration.ofSeconds(10);
  static final Duration SAFETY_MARGIN = Duration.ofSeconds(1);

  /** Which transports the fault group holds. */
  enum FaultScope {
    /** Every rank of both engines. */
    EVERY_TRANSPORT,
    /** Only rank 1 of the decode engine. */
    DECODE_RANK_1
  }

  final ManualClock clock = new ManualClock();
  final Faults faults = new Faults(1);
  final Engine prefill;
  final Engine decode;

  EnginePair(LoadFailurePolicy decodePolicy) {
    this(SHAPE, SHAPE, decodePolicy);
  }

  /** A pair whose leases live at most {@code maxLifetime}, renewals included. */
  EnginePair(LoadFailurePolicy decodePolicy, Duration maxLifetime) {
    this(SHAPE, SHAPE, decodePolicy, maxLifetime, FaultScope.EVERY_TRANSPORT);
  }

  EnginePair(EngineShape prefill, EngineShape decode, LoadFailurePolicy decodePolicy) {
    this(prefill, decode, decodePolicy, Duration.ofMinutes(1), FaultScope.EVERY_TRANSPORT);
  }

  EnginePair(
      EngineShape prefillShape,
      EngineShape decodeShape,
      LoadFailurePolicy decodePolicy,
      Duration maxLifetime,
      FaultScope scope) {
    String name = "engine-test-" + UUID.randomUUID();
    String faulted =
        TransportProvider.agentName(name + "-d", scope == FaultScope.DECODE_RANK_1 ? 1 : 0);
    UnaryOperator<Transport> decorator =
        transport ->
            scope == FaultScope.EVERY_TRANSPORT || transport.agentName().equals(faulted)
                ? faults.decorate(transport)
                : transport;
    this.prefill =
        start(
            name, "p", Role.PRODUCER, prefillShape, LoadFailurePolicy.FAIL, maxLifetime, decorator);
    this.decode =
        start(name, "d", Role.CONSUMER, decodeShape, decodePolicy, maxLifetime, decorator);
  }

  /** The toy model with {@code tp} ranks, blocks of {@code tokensPerBlock} and a prefix cache. */
  static EngineShape shape(int tp, int tokensPerBlock, int prefixCacheBlocks) {
    return shape(tp, tokensPerBlock, prefixCacheBlocks, KvLayout.MemoryOrder.HEAD_MAJOR);
  }

  static EngineShape shape(
      int tp, int tokensPerBlock, int prefixCacheBlocks, KvLayout.MemoryOrder order) {
    return new EngineShape(ToyModel.layout(tokensPerBlock, BLOCKS, order), tp, prefixCacheBlocks);
  }

  private Engine start(
      String fabricName,
      String kind,
      Role role,
      EngineShape shape,
      LoadFailurePolicy policy,
      Duration maxLifetime,
      UnaryOperator<Transport> decorator) {
    ConnectorSettings settings =
        ConnectorSettings.builder(FakeTransportProvider.TYPE, fabricName + "-" + kind)
            .role(role)
            .tpDegree(shape.tpDegree())
            .clock(clock)
            .leaseTerms(new LeaseTerms(LEASE, maxLifetime))
            .safetyMargin(SAFETY_MARGIN)
            .properties(Map.of(FakeTransportProvider.FABRIC, fabricName))
            .build();
    KvConnector connector =
        ConnectorRegistry.of(List.of(new FakeTransportProvider())).create(settings, decorator);
    return new EngineFactory(policy, Duration.ofMillis(1)).start(connector, shape);
  }

  @Override
  public void close() {
    decode.close();
    prefill.close();
  }
}
