package io.kvbridge.sample.completions;

import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A failure nobody planned for (a bug, an unexpected state): the client learns only that it
 * happened and under which id; the log has it in full under the same id.
 */
final class UnexpectedFailure {

  private static final Logger LOG = LoggerFactory.getLogger(UnexpectedFailure.class);

  private UnexpectedFailure() {}

  /**
   * Logs {@code cause} (if known) with a fresh id and returns the 500 answer that names the id.
   *
   * @param what what was being served, e.g. {@code POST /v1/completions}
   */
  static ErrorResponse report(String what, @Nullable Throwable cause) {
    String id = HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
    LOG.error("internal error {} while serving {}", id, what, cause);
    return ErrorResponse.of(500, "internal_error", "internal error (id " + id + ")", null);
  }
}
