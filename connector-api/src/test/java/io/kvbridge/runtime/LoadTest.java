package io.kvbridge.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.observe.TraceContext;
import io.kvbridge.observe.TransferSpan;
import io.kvbridge.runtime.Load.State;
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
  void aFailedLoadMarksBothItsSpanAndTheCurrentPhaseAsErrors() {
    Load load = TestLoads.oneBlock();
    RecordingSpan root = new RecordingSpan("load");
    load.span = root;
    load.startPhase("read");

    load.failSpan("failed", "checksum mismatch");

    RecordingSpan phase = root.children.get(0);
    assertThat(phase.errors).containsExactly("checksum mismatch");
    assertThat(phase.ended).isTrue();
    assertThat(root.errors).containsExactly("checksum mismatch");
    assertThat(root.ended).isTrue();
    assertThat(load.span).isSameAs(TransferSpan.NONE);
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
