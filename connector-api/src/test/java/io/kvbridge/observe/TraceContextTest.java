package io.kvbridge.observe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class TraceContextTest {

  private static final String PARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

  @Test
  void wellFormedTraceparentIsReadWithItsIdsAndSamplingFlag() {
    TraceContext read = TraceContext.read(PARENT, null);

    assertThat(read).isInstanceOf(TraceContext.W3c.class);
    TraceContext.W3c w3c = (TraceContext.W3c) read;
    assertThat(w3c.traceId()).isEqualTo("4bf92f3577b34da6a3ce929d0e0e4736");
    assertThat(w3c.parentId()).isEqualTo("00f067aa0ba902b7");
    assertThat(w3c.sampled()).isTrue();
    assertThat(w3c.tracestate()).isEmpty();
  }

  @Test
  void tracestateIsKeptAlongsideAWellFormedTraceparent() {
    TraceContext read = TraceContext.read(PARENT, "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7");

    assertThat(((TraceContext.W3c) read).tracestate())
        .contains("congo=t61rcWkgMzE,rojo=00f067aa0ba902b7");
  }

  @Test
  void noTraceFieldsAreAbsent() {
    assertThat(TraceContext.read(null, null)).isSameAs(TraceContext.ABSENT);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
        "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0x",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra"
      })
  void malformedTraceparentIsIgnoredNamingTheField(String traceparent) {
    TraceContext read = TraceContext.read(traceparent, null);

    assertThat(read).isInstanceOf(TraceContext.Ignored.class);
    assertThat(((TraceContext.Ignored) read).problem()).startsWith("traceparent");
  }

  @Test
  void traceparentOfAnotherJsonTypeIsIgnored() {
    assertThat(TraceContext.read(42, null))
        .isEqualTo(new TraceContext.Ignored("traceparent must be a string"));
  }

  @Test
  void tracestateLongerThanTheLimitIsIgnoredWithoutKeepingIt() {
    String huge = "k=" + "v".repeat(TraceContext.MAX_TRACESTATE);

    TraceContext read = TraceContext.read(PARENT, huge);

    assertThat(read).isInstanceOf(TraceContext.Ignored.class);
    assertThat(((TraceContext.Ignored) read).problem())
        .startsWith("tracestate is 514 characters")
        .hasSizeLessThan(80);
  }

  @ParameterizedTest
  @ValueSource(strings = {"no-equals-sign", "k=v,=x", "k=caf\u00e9"})
  void malformedTracestateIsIgnored(String tracestate) {
    assertThat(TraceContext.read(PARENT, tracestate)).isInstanceOf(TraceContext.Ignored.class);
  }

  @Test
  void tracestateWithoutATraceparentIsIgnored() {
    assertThat(TraceContext.read(null, "k=v")).isInstanceOf(TraceContext.Ignored.class);
  }

  @Test
  void spanContextIsWrittenWithIdsPaddedToTheirW3cWidths() {
    TraceContext.W3c w3c =
        TraceContext.of("a3ce929d0e0e4736", "f067aa0ba902b7", false, Optional.empty());

    assertThat(w3c.traceparent())
        .isEqualTo("00-0000000000000000a3ce929d0e0e4736-00f067aa0ba902b7-00");
    assertThat(w3c.sampled()).isFalse();
  }

  @Test
  void spanContextWithAnIdThatIsNotHexIsRefused() {
    assertThatThrownBy(() -> TraceContext.of("xyz", "1", true, Optional.empty()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("hex digits");
  }

  @Test
  void noOpTracerHandsOutOneConstantSpanWhoseChildrenAreItself() {
    TransferSpan lease = TransferTracer.NONE.startLease("r-1");
    TransferSpan load = TransferTracer.NONE.startLoad("r-2", "p", TraceContext.read(PARENT, null));

    assertThat(lease).isSameAs(TransferSpan.NONE).isSameAs(load);
    assertThat(lease.startChild(TransferSpans.LEASE_GRANT)).isSameAs(TransferSpan.NONE);
    assertThat(lease.context()).isSameAs(TraceContext.ABSENT);
  }
}
