package io.kvbridge.nixl;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.lease.EndReason;
import io.kvbridge.lease.LeaseTerms;
import io.kvbridge.nixl.testing.RequiresNixl;
import io.kvbridge.runtime.ConnectorRegistry;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.FinishDecision;
import io.kvbridge.spi.FinishedRequest;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.Role;
import io.kvbridge.spi.TokenIds;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.time.ManualClock;
import io.kvbridge.transfer.KvMemory;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** A lease granted by a producer over real NIXL ends as EXPIRED when no consumer reads it. */
@ExtendWith(RequiresNixl.class)
class NixlLeaseExpiryTest {

  private static final KvLayout LAYOUT = KvLayout.opaque("expiry/fp16", 16, 256, 8);
  private static final Duration LEASE = Duration.ofSeconds(30);

  private final ManualClock clock = new ManualClock();
  private final KvConnector producer =
      ConnectorRegistry.of(List.of(new NixlTransportProvider()))
          .create(
              ConnectorSettings.builder("nixl", "expiry-prefill")
                  .role(Role.PRODUCER)
                  .leaseTerms(new LeaseTerms(LEASE, Duration.ofMinutes(2)))
                  .clock(clock)
                  .properties(Map.of("nixl.memory", "dram"))
                  .build());
  private final KvMemory memory = producer.worker().allocateKvCache(LAYOUT);

  @AfterEach
  void close() {
    producer.close();
    memory.close();
  }

  @Test
  void aLeaseNobodyReadsEndsExpiredAndItsBlocksAreHandedBack() {
    producer.worker().registerKvCache(memory, LAYOUT);
    FinishDecision decision =
        producer
            .scheduler()
            .requestFinished(
                new FinishedRequest(
                    "req-1", List.of(2, 5), TokenIds.of(new int[32]), 32, false, true));
    TransferParams params = decision.params().orElseThrow();
    assertThat(decision.delayFree()).isTrue();
    assertThat(params.blockIds()).containsExactly(2, 5);

    clock.advance(LEASE.minusNanos(1));
    assertThat(producer.worker().getFinished(Set.of()).doneSending()).isEmpty();
    clock.advance(Duration.ofNanos(1));

    assertThat(producer.worker().getFinished(Set.of()).doneSending()).containsExactly("req-1");
    assertThat(producer.status().producer().orElseThrow().leasesEnded())
        .containsEntry(EndReason.EXPIRED, 1L);
    assertThat(producer.status().producer().orElseThrow().liveLeases()).isZero();
  }
}
