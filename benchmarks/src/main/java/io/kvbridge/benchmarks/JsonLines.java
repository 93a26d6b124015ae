package io.kvbridge.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Figures a benchmark records beside JMH's results: one JSON object a line, appended to the file a
 * system property names (run.sh sets it; the report reads the file). Nothing is written when the
 * property is unset, as in a run of one benchmark by hand.
 */
public final class JsonLines {

  private JsonLines() {}

  /**
   * Appends {@code line} (one JSON object and its line end) to the file {@code property} names, if
   * it names one.
   *
   * @param what what the line records, for the error if the file cannot be written
   */
  public static void append(String property, String line, String what) {
    String file = System.getProperty(property);
    if (file == null || file.isBlank()) {
      return;
    }
    try {
      Files.writeString(
          Path.of(file),
          line,
          StandardCharsets.UTF_8,
          StandardOpenOption.CREATE,
          StandardOpenOption.APPEND);
    } catch (IOException e) {
      throw new UncheckedIOException("recording " + what + " in " + file, e);
    }
  }
}
