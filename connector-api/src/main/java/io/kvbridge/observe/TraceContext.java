package io.kvbridge.observe;

import java.util.Optional;

/**
 * The trace a request's transfer belongs to, as transfer parameters carry it from P to D: the W3C
 * Trace Context fields {@code traceparent} and {@code tracestate}. The fields are optional and
 * never decide anything: parameters without them, or with fields that are malformed, load exactly
 * as before; malformed ones are {@linkplain Ignored ignored} (and counted by the consumer as {@link
 * RejectedInput#MALFORMED_TRACE_CONTEXT}), never refused.
 *
 * <p>Only version {@code 00} of {@code traceparent} is read: {@code 00-<32 hex trace id>-<16 hex
 * parent id>-<2 hex flags>}, lowercase, ids not all zero. {@code tracestate} is at most {@value
 * #MAX_TRACESTATE} printable ASCII characters of comma-separated {@code key=value} members, and
 * only alongside a {@code traceparent}.
 */
public sealed interface TraceContext {

  /** The longest {@code tracestate} accepted (the W3C limit a vendor must propagate). */
  int MAX_TRACESTATE = 512;

  /** No trace context: the consumer starts a trace of its own. */
  TraceContext ABSENT = new Absent();

  /** The parameters name no trace. */
  record Absent() implements TraceContext {}

  /**
   * A well-formed W3C trace context.
   *
   * @param traceparent the {@code traceparent} field, version 00
   * @param tracestate the {@code tracestate} field, if any
   */
  record W3c(String traceparent, Optional<String> tracestate) implements TraceContext {

    /** Checks both fields; throws {@link IllegalArgumentException} naming the bad one. */
    public W3c {
      Optional<String> problem =
          traceparentProblem(traceparent)
              .or(
                  () ->
                      tracestate == null
                          ? Optional.of("tracestate must be absent or a string")
                          : tracestate.flatMap(TraceContext::tracestateProblem));
      if (problem.isPresent()) {
        throw new IllegalArgumentException(problem.get());
      }
    }

    /** The 32 hex digits of the trace id. */
    public String traceId() {
      return traceparent.substring(3, 35);
    }

    /** The 16 hex digits of the span that is the parent of the receiver's spans. */
    public String parentId() {
      return traceparent.substring(36, 52);
    }

    /** Whether the caller sampled the trace (flag bit 0). */
    public boolean sampled() {
      return (Integer.parseInt(traceparent.substring(53, 55), 16) & 1) == 1;
    }
  }

  /**
   * Trace fields that were present but malformed: ignored, the load goes on as if they were absent.
   * The raw value is not kept.
   *
   * @param problem what was wrong, naming the field
   */
  record Ignored(String problem) implements TraceContext {}

  /**
   * The context of a span, as W3C writes it: ids are left-padded with zeros to 32 and 16 hex digits
   * (a tracer with 64-bit trace ids gives 16).
   *
   * @throws IllegalArgumentException if an id is not 1 to 32 (trace) or 1 to 16 (span) lowercase
   *     hex digits, or is all zeros
   */
  static W3c of(String traceId, String spanId, boolean sampled, Optional<String> tracestate) {
    return new W3c(
        "00-" + pad(traceId, 32) + "-" + pad(spanId, 16) + "-" + (sampled ? "01" : "00"),
        tracestate);
  }

  /**
   * Reads the trace fields of decoded transfer parameters; never throws. Either field may be {@code
   * null} (absent).
   */
  static TraceContext read(Object traceparent, Object tracestate) {
    if (traceparent == null) {
      return tracestate == null
          ? ABSENT
          : new Ignored("tracestate is present without a traceparent");
    }
    if (!(traceparent instanceof String parent)) {
      return new Ignored("traceparent must be a string");
    }
    Optional<String> problem = traceparentProblem(parent);
    if (problem.isPresent()) {
      return new Ignored(problem.get());
    }
    if (tracestate == null) {
      return new W3c(parent, Optional.empty());
    }
    if (!(tracestate instanceof String state)) {
      return new Ignored("tracestate must be a string");
    }
    return tracestateProblem(state)
        .<TraceContext>map(Ignored::new)
        .orElseGet(() -> new W3c(parent, Optional.of(state)));
  }

  private static String pad(String hexId, int digits) {
    if (hexId == null || hexId.isEmpty() || hexId.length() > digits || !isLowerHex(hexId)) {
      throw new IllegalArgumentException(
          "a trace id must be 1 to 32 and a span id 1 to 16 lowercase hex digits");
    }
    return "0".repeat(digits - hexId.length()) + hexId;
  }

  private static Optional<String> traceparentProblem(String value) {
    if (value == null) {
      return Optional.of("traceparent must be a string");
    }
    if (value.length() != 55
        || !value.startsWith("00-")
        || value.charAt(35) != '-'
        || value.charAt(52) != '-') {
      return Optional.of(
          "traceparent must be 00-<32 hex digits>-<16 hex digits>-<2 hex digits> (55 characters)");
    }
    String traceId = value.substring(3, 35);
    String parentId = value.substring(36, 52);
    String flags = value.substring(53, 55);
    if (!isLowerHex(traceId) || !isLowerHex(parentId) || !isLowerHex(flags)) {
      return Optional.of("traceparent must hold lowercase hex digits only");
    }
    if (traceId.chars().allMatch(c -> c == '0') || parentId.chars().allMatch(c -> c == '0')) {
      return Optional.of("traceparent's trace id and parent id must not be all zeros");
    }
    return Optional.empty();
  }

  private static Optional<String> tracestateProblem(String value) {
    if (value.length() > MAX_TRACESTATE) {
      return Optional.of(
          "tracestate is " + value.length() + " characters, more than " + MAX_TRACESTATE);
    }
    if (!value.chars().allMatch(c -> c >= 0x20 && c <= 0x7e)) {
      return Optional.of("tracestate must be printable ASCII");
    }
    for (String member : value.split(",", -1)) {
      String m = member.strip();
      if (!m.isEmpty() && m.indexOf('=') <= 0) {
        return Optional.of("tracestate must be comma-separated key=value members");
      }
    }
    return Optional.empty();
  }

  private static boolean isLowerHex(String s) {
    return s.chars().allMatch(c -> (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
  }
}
