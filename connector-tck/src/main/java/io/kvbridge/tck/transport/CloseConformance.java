package io.kvbridge.tck.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.kvbridge.tck.ConnectorUnderTest;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.TransferHandle;
import io.kvbridge.transfer.TransferOp;
import io.kvbridge.transfer.TransferStatus;
import io.kvbridge.transfer.Transport;
import io.kvbridge.transfer.TransportException;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Closing an agent: it refuses to post and notify, its owner keeps its memory, closing again is
 * harmless, and, where the transport promises it, peers can no longer write into it.
 */
public abstract class CloseConformance extends TransportFixture {

  /** These tests, run against {@code connector}. */
  protected CloseConformance(ConnectorUnderTest connector) {
    super(connector);
  }

  @Test
  void closedTransportRefusesToPost() {
    Pair pair = connectedPair();

    pair.initiator().close();

    assertAReadFromTargetIsRefused(pair.initiator(), pair.initiatorMemory(), pair.targetMemory());
  }

  @Test
  void closedTransportRefusesToNotify() {
    Pair pair = connectedPair();

    pair.initiator().close();

    assertThatThrownBy(() -> pair.initiator().notify("target", new byte[] {1}))
        .isInstanceOf(TransportException.class);
  }

  @Test
  void closingLeavesRegisteredMemoryUsableByItsOwner() {
    Transport t = transport("agent");
    KvMemory memory = registered(t);
    byte[] data = randomBytes(REGION_BYTES);

    t.close();
    fill(memory, 0, data);

    assertThat(contents(memory, 0, REGION_BYTES)).isEqualTo(data);
  }

  @Test
  void closingTwiceIsHarmless() {
    Transport t = transport("agent");
    t.close();

    assertThatCode(t::close).doesNotThrowAnyException();
  }

  @Test
  void aPeerCannotMoveBytesIntoAClosedAgent() {
    assumeTrue(
        underTest.closingRevokesPeerAccess(),
        "this transport does not revoke peers' access to memory when its agent closes");
    Pair pair = connectedPair();
    fill(pair.initiatorMemory(), 0, randomBytes(REGION_BYTES));
    byte[] before = randomBytes(REGION_BYTES);
    fill(pair.targetMemory(), 0, before);

    pair.target().close();

    TransferStatus outcome;
    try {
      TransferHandle handle =
          pair.initiator()
              .post(
                  TransferOp.WRITE,
                  blocks(pair.initiatorMemory(), 0),
                  "target",
                  blocks(pair.targetMemory(), 0),
                  Optional.empty());
      outcome = awaitSettled(pair.initiator(), handle);
    } catch (TransportException refused) {
      outcome = new TransferStatus.Failed(refused.getMessage());
    }
    assertThat(outcome).isInstanceOf(TransferStatus.Failed.class);
    assertThat(contents(pair.targetMemory(), 0, REGION_BYTES)).isEqualTo(before);
  }
}
