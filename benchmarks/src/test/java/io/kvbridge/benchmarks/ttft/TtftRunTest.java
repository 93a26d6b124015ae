package io.kvbridge.benchmarks.ttft;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.fake.FakeTransportProvider;
import io.kvbridge.spi.ConnectorSettings;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TtftRunTest {

  @Test
  void aStreamedRequestIsLeasedAsItsPrefillStartsAndDHoldsPsBytesOnceItIsReceived()
      throws Exception {
    try (TtftRun.Pair pair = new TtftRun.Pair(FakeTransportProvider.TYPE, 1, 64)) {
      TtftRun.Sample whole = pair.request(64, false);
      pair.checkLastRequest(TtftRun.Mode.WHOLE, 64);
      TtftRun.Sample streamed = pair.request(64, true);
      pair.checkLastRequest(TtftRun.Mode.STREAMED, 64);

      assertThat(whole.streamed()).isFalse();
      assertThat(streamed.streamed()).isTrue();
      for (TtftRun.Sample s : new TtftRun.Sample[] {whole, streamed}) {
        // Every layer costs 2 µs a token: a prefill of 64 tokens over 32 layers takes 4 ms at
        // least.
        assertThat(s.prefillNanos()).isGreaterThanOrEqualTo(4_096_000L);
        assertThat(s.ackedAt()).isGreaterThan(s.prefillNanos()).isLessThanOrEqualTo(s.ttftNanos());
        assertThat(s.transferNanos()).isPositive();
      }
    }
  }

  @Test
  void belowTheDefaultThresholdAnEngineThatStreamsIsLeasedWhole() throws Exception {
    int tokens = ConnectorSettings.DEFAULT_STREAMING_MIN_TOKENS - 16;
    try (TtftRun.Pair pair =
        new TtftRun.Pair(
            FakeTransportProvider.TYPE, ConnectorSettings.DEFAULT_STREAMING_MIN_TOKENS, tokens)) {
      assertThat(pair.request(tokens, true).streamed()).isFalse();
      pair.checkLastRequest(TtftRun.Mode.DEFAULT, tokens);
    }
  }

  @Test
  void aRunWritesOneLineForEachModeAndPromptLength(@TempDir Path dir) throws Exception {
    Path out = dir.resolve("ttft.jsonl");

    TtftRun.main(new String[] {out.toString(), FakeTransportProvider.TYPE, "16"});

    assertThat(Files.readAllLines(out))
        .hasSize(TtftRun.Mode.values().length)
        .allSatisfy(line -> assertThat(line).contains("\"tokens\": 16", "\"requests\": 60"))
        .anySatisfy(line -> assertThat(line).contains("\"mode\": \"STREAMED\"", "\"streamed\": 60"))
        .anySatisfy(line -> assertThat(line).contains("\"mode\": \"DEFAULT\"", "\"streamed\": 0"));
  }
}
