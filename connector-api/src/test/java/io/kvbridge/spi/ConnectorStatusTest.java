package io.kvbridge.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.lease.EndReason;
import io.kvbridge.net.DropReason;
import io.kvbridge.observe.RejectedInput;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ConnectorStatusTest {

  private static final ProducerStatus PRODUCER =
      new ProducerStatus(
          Optional.empty(),
          0,
          Optional.empty(),
          2,
          Map.of(EndReason.EXPIRED, 2L),
          0,
          0,
          List.of(),
          Map.of(DropReason.FRAME_REFUSED, 1L));

  private static final ConsumerStatus CONSUMER = new ConsumerStatus(0, 0, 0, 0, 0, 0, List.of());

  @Test
  void aProducerHasOnlyTheProducerPart() {
    assertThatThrownBy(
            () -> status(Role.PRODUCER, Optional.of(PRODUCER), Optional.of(CONSUMER), Map.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("producer engine has a producer part and no consumer part");
  }

  @Test
  void aConsumerHasOnlyTheConsumerPart() {
    assertThatThrownBy(() -> status(Role.CONSUMER, Optional.empty(), Optional.empty(), Map.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("consumer engine has no producer part and a consumer part");
  }

  @Test
  void anEngineOfBothRolesHasBothParts() {
    ConnectorStatus both =
        status(Role.BOTH, Optional.of(PRODUCER), Optional.of(CONSUMER), Map.of());

    assertThat(both.producer()).contains(PRODUCER);
    assertThat(both.consumer()).contains(CONSUMER);
  }

  @Test
  void everyKindOfRefusalIsCountedInDeclarationOrder() {
    ConnectorStatus status =
        status(
            Role.CONSUMER,
            Optional.empty(),
            Optional.of(CONSUMER),
            Map.of(RejectedInput.WRONG_TOKEN, 3L));

    assertThat(status.rejected().keySet()).containsExactly(RejectedInput.values());
    assertThat(status.rejected())
        .containsEntry(RejectedInput.WRONG_TOKEN, 3L)
        .containsEntry(RejectedInput.MALFORMED_MESSAGE, 0L);
  }

  @Test
  void everyEndReasonAndDropReasonIsCountedInDeclarationOrder() {
    assertThat(PRODUCER.leasesEnded().keySet()).containsExactly(EndReason.values());
    assertThat(PRODUCER.leasesEnded())
        .containsEntry(EndReason.EXPIRED, 2L)
        .containsEntry(EndReason.READ, 0L);
    assertThat(PRODUCER.droppedConnections().keySet()).containsExactly(DropReason.values());
    assertThat(PRODUCER.droppedConnections())
        .containsEntry(DropReason.FRAME_REFUSED, 1L)
        .containsEntry(DropReason.DEADLINE_PASSED, 0L);
  }

  @Test
  void aRoleReadsAsItIsConfigured() {
    assertThat(Role.PRODUCER).hasToString("producer");
    assertThat(Role.BOTH).hasToString("both");
  }

  private static ConnectorStatus status(
      Role role,
      Optional<ProducerStatus> producer,
      Optional<ConsumerStatus> consumer,
      Map<RejectedInput, Long> rejected) {
    return new ConnectorStatus("fake", "engine-1", role, 7L, producer, consumer, rejected);
  }
}
