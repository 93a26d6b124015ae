package io.kvbridge.runtime.consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.integrity.ReadDigest;
import io.kvbridge.layout.KvLayout;
import io.kvbridge.observe.TraceContext;
import io.kvbridge.observe.TransferSpan;
import io.kvbridge.runtime.consumer.Load.State;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class LoadTest {

  @Test
  void heartbeatsRenewFromAwaitingAllocationToReading() {
    assertThat(Arrays.stream(State.values()).filter(State::wantsHeartbeats))
        .containsExactly(State.AWAITING_ALLOCATION, State.READY, State.READING);
  }

  @Test
  void blocksAreBorrowedFromReadyUntilTheReply() {
    assertThat(Arrays.stream(State.values()).filter(State::borrowsBlocks))
        .containsExactly(State.READY, State.READING, State.AWAITING_REPLY);
  }

  @Test
  void everyStateOfALoadIsInTheProtocolsTableOfALoadOnD() throws Exception {
    String doc = Files.readString(Path.of("..", "docs", "protocol.md"));
    String section = doc.substring(doc.indexOf("### A load on D"), doc.indexOf("## Versioning"));
    for (State state : State.values()) {
      String row = "| " + state.name() + " |";
      assertThat(section.contains(row) || state.isFinal()).as("a row for %s", state).isTrue();
      assertThat(section).contains(state.name());
    }
  }

  @Test
  void aLoadGoesFromConfirmingToReceivedThroughItsTransitions() {
    Load load = TestLoads.oneBlock();
    ProducerPeer peer = TestLoads.oneRankProducer(KvLayout.opaque("m", 4, 4, 16), 0x9000);

    TestLoads.advance(load, peer, List.of(7), State.AWAITING_REPLY, 42L, 0L);
    assertThat(load.state()).isEqualTo(State.AWAITING_REPLY);
    assertThat(load.stateDeadline()).isEqualTo(42L);
    assertThat(load.localBlocks()).containsExactly(7);

    load.received();
    assertThat(load.state()).isEqualTo(State.RECEIVED);
    assertThat(load.state().isFinal()).isTrue();
  }

  @Test
  void aTransitionFromAStateItDoesNotLeaveIsRefused() {
    Load load = TestLoads.oneBlock();

    assertThatThrownBy(() -> load.allocated(List.of(0)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("load of d-1 cannot be allocated in state CONFIRMING");
    assertThatThrownBy(load::received).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(load::failed).isInstanceOf(IllegalStateException.class);
    assertThat(load.state()).isEqualTo(State.CONFIRMING);
  }

  @Test
  void aRefusedLoadCanNeitherBeConfirmedNorCancelled() {
    Load load = TestLoads.oneBlock();
    load.refused();

    assertThat(load.state()).isEqualTo(State.REFUSED);
    assertThatThrownBy(() -> load.confirmed(5L)).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(load::cancelled).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void aRefusedLoadTakesNoRenewal() {
    Load load = TestLoads.oneBlock();
    load.refused();

    assertThatThrownBy(() -> load.renewed(5L))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("load of d-1 cannot be renewed in state REFUSED");
  }

  @Test
  void aConfirmationIsSentOnce() {
    Load load = TestLoads.oneBlock();
    ProducerPeer peer = TestLoads.oneRankProducer(KvLayout.opaque("m", 4, 4, 16), 0x9000);
    ReadDigest digest = ReadDigest.fromBytes(new byte[32]);
    load.confirmSent(peer, digest, 0, 5L);

    assertThatThrownBy(() -> load.confirmSent(peer, digest, 0, 6L))
        .isInstanceOf(IllegalStateException.class);
    assertThat(load.confirmSentAt()).isEqualTo(5L);
  }

  @Test
  void aFullLocalHitIsReleasedInsteadOfConfirmed() {
    Load hit = Load.releasing("d-1", TestLoads.oneBlock().params(), 4, 0L, 99L);
    ProducerPeer peer = TestLoads.oneRankProducer(KvLayout.opaque("m", 4, 4, 16), 0x9000);

    assertThat(hit.state()).isEqualTo(State.RELEASING);
    assertThatThrownBy(() -> hit.confirmSent(peer, ReadDigest.fromBytes(new byte[32]), 0, 5L))
        .isInstanceOf(IllegalStateException.class);
    hit.released(peer, 5L);
    assertThat(hit.state()).isEqualTo(State.RELEASED);
    assertThat(hit.peer()).isSameAs(peer);
  }

  @Test
  void aRenewalMovesTheDeadlineOfAReadButNeverShortensIt() {
    Load load = TestLoads.oneBlock();
    ProducerPeer peer =
        new ProducerPeer(
            "prefill-0",
            "local://prefill-0",
            1L,
            TestLoads.oneRankProducer(KvLayout.opaque("m", 4, 4, 16), 0x9000).ranks(),
            new ClockSync(new ClockOffset(0, 0), 0));
    TestLoads.advance(load, peer, List.of(0), State.READING, 100L, 0L);

    load.renewed(500L);
    assertThat(load.producerDeadline()).isEqualTo(500L);
    assertThat(load.stateDeadline()).isEqualTo(500L);

    load.renewed(300L);
    assertThat(load.producerDeadline()).isEqualTo(500L);
    assertThat(load.stateDeadline()).isEqualTo(500L);
  }

  @Test
  void aFailedLoadMarksBothItsSpanAndTheCurrentPhaseAsErrors() {
    Load load = TestLoads.oneBlock();
    RecordingSpan root = new RecordingSpan("load");
    load.traced(root);
    load.startPhase("read");

    load.failSpan("failed", "checksum mismatch");

    RecordingSpan phase = root.children.get(0);
    assertThat(phase.errors).containsExactly("checksum mismatch");
    assertThat(phase.ended).isTrue();
    assertThat(root.errors).containsExactly("checksum mismatch");
    assertThat(root.ended).isTrue();
    assertThat(load.span()).isSameAs(TransferSpan.NONE);
  }

  /** A span that remembers what was done to it. */
  static final class RecordingSpan implements TransferSpan {
    final String name;
    final List<RecordingSpan> children = new ArrayList<>();
    final List<String> errors = new ArrayList<>();
    final List<String> events = new ArrayList<>();
    final List<String> tags = new ArrayList<>();
    boolean ended;

    RecordingSpan(String name) {
      this.name = name;
    }

    @Override
    public TransferSpan startChild(String childName) {
      RecordingSpan child = new RecordingSpan(childName);
      children.add(child);
      return child;
    }

    @Override
    public void tag(String key, String value) {
      tags.add(key + "=" + value);
    }

    @Override
    public void tag(String key, long value) {
      tags.add(key + "=" + value);
    }

    @Override
    public void event(String eventName) {
      events.add(eventName);
    }

    @Override
    public void error(String reason) {
      errors.add(reason);
    }

    @Override
    public void end() {
      ended = true;
    }

    @Override
    public TraceContext context() {
      return TraceContext.ABSENT;
    }
  }
}
