package io.kvbridge.fake;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.tck.faults.Faults;
import io.kvbridge.transfer.TransferHandle;
import io.kvbridge.transfer.Transport;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * When a fault group says nothing is moving between its members, over fake agents that copy inside
 * {@code post}.
 */
class FaultGroupQuietTest {

  private final Faults faults = new Faults(7);
  private final TwoAgents agents = TwoAgents.synchronous(faults);

  @AfterEach
  void close() {
    agents.close();
  }

  @Test
  void groupIsQuietOnlyOnceWhatWasSentWasDrained() {
    agents.decode.notify("prefill", new byte[] {1});
    assertThat(faults.quiet()).isFalse();

    agents.prefill.drainNotifications();

    assertThat(faults.quiet()).isTrue();
  }

  @Test
  void whatWaitsForAStoppedMemberIsLeftOutOnlyForThatMember() {
    agents.decode.notify("prefill", new byte[] {1});

    assertThat(faults.quietExceptTowards("prefill")).isTrue();
    assertThat(faults.quietExceptTowards("decode")).isFalse();
  }

  @Test
  void whatWasSentToAMemberThatClosedIsNotWaitedFor() {
    agents.decode.notify("prefill", new byte[] {1});

    agents.prefill.close();

    assertThat(faults.quiet()).isTrue();
  }

  @Test
  void whatIsSentToAClosedMemberIsNotWaitedForByTheOneThatTookItsName() {
    agents.prefill.close();
    try (Transport successor = faults.decorate(agents.fabric.join("prefill"))) {
      // Decode still has the old prefill's metadata: the fabric delivers to that agent, not this.
      agents.decode.notify("prefill", new byte[] {1});

      assertThat(successor.drainNotifications()).isEmpty();
      assertThat(faults.quiet()).isTrue();
    }
  }

  @Test
  void attachedNotificationCountsAsSentOnceTheTransferIsSeenDone() {
    TransferHandle handle = agents.read(TwoAgents.BLOCKS, Optional.of(new byte[] {1}));
    assertThat(faults.quiet()).isFalse(); // the transfer was never polled

    agents.decode.status(handle);
    assertThat(faults.quiet()).isFalse(); // its notification waits at prefill
    agents.prefill.drainNotifications();

    assertThat(faults.quiet()).isTrue();
  }
}
