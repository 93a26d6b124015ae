package io.kvbridge.tck.wire;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A reading of the wire format written in Python from {@code docs/protocol.md} alone agrees with
 * every golden vector: the spec is enough to build a peer. Needs {@code python3}, which the build
 * needs anyway (it fetches NIXL with pip).
 */
class IndependentReadingTest {

  @Test
  void aPeerWrittenFromTheSpecReadsEveryVectorAsThisImplementationWritesIt(@TempDir Path dir)
      throws IOException, InterruptedException {
    Path vectors = dir.resolve(GoldenVectors.RESOURCE);
    try (InputStream in = GoldenVectors.class.getResourceAsStream(GoldenVectors.RESOURCE)) {
      Files.copy(in, vectors, StandardCopyOption.REPLACE_EXISTING);
    }
    Process python =
        new ProcessBuilder("python3", "src/test/python/check_golden_vectors.py", vectors.toString())
            .redirectErrorStream(true)
            .start();
    assertThat(python.waitFor(120, TimeUnit.SECONDS)).as("the checker finished").isTrue();
    String output = new String(python.getInputStream().readAllBytes(), StandardCharsets.UTF_8);

    assertThat(python.exitValue()).as(output).isZero();
    assertThat(output).startsWith("ok: " + GoldenVectors.load().size() + " vectors");
  }
}
