package io.kvbridge.spi;

import io.kvbridge.observe.RejectedInput;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A point-in-time view of a connector, for health checks and the management endpoint: who the
 * engine is, what it does as a producer and as a consumer, and what untrusted input it refused.
 *
 * <p>A part is present exactly when the role has it: a {@link Role#PRODUCER} has only {@link
 * #producer()}, a {@link Role#CONSUMER} only {@link #consumer()}, {@link Role#BOTH} both.
 *
 * @param type the connector type, e.g. {@code fake} or {@code nixl}
 * @param engineId this engine's id
 * @param role this engine's role
 * @param incarnation which start of this engine this is; drawn afresh at every start
 * @param producer the leases this engine holds for consumers and the handshakes it answers; present
 *     exactly when the role {@linkplain Role#produces() produces}
 * @param consumer the loads this engine runs and the producers it knows; present exactly when the
 *     role {@linkplain Role#consumes() consumes}
 * @param rejected untrusted inputs refused since start, by kind; every kind is present, in
 *     declaration order
 */
public record ConnectorStatus(
    String type,
    String engineId,
    Role role,
    long incarnation,
    Optional<ProducerStatus> producer,
    Optional<ConsumerStatus> consumer,
    Map<RejectedInput, Long> rejected) {

  /**
   * Checks that the parts match the role and fills in every kind of refusal.
   *
   * @throws IllegalArgumentException if a part is present that the role does not have, or missing
   *     one it has
   */
  public ConnectorStatus {
    Objects.requireNonNull(role, "role");
    if (producer.isPresent() != role.produces() || consumer.isPresent() != role.consumes()) {
      throw new IllegalArgumentException(
          "the status of a "
              + role
              + " engine has "
              + (role.produces() ? "a producer part" : "no producer part")
              + " and "
              + (role.consumes() ? "a consumer part" : "no consumer part")
              + "; got producer "
              + (producer.isPresent() ? "present" : "absent")
              + ", consumer "
              + (consumer.isPresent() ? "present" : "absent"));
    }
    rejected = EnumCounts.complete(RejectedInput.class, rejected);
  }
}
