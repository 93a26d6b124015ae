package io.kvbridge.observe;

/**
 * Opens the spans of requests' transfer paths, so that one request's path across P and D is one
 * trace: P's {@link TransferSpans#LEASE lease span} goes into the transfer parameters as a W3C
 * {@link TraceContext}, and D's {@link TransferSpans#LOAD load span} is its child. An
 * implementation adapts a tracing library (the Spring Boot starter's uses Micrometer Tracing); the
 * connector API knows none.
 *
 * <p>{@link #NONE} is the default: it returns {@link TransferSpan#NONE} and allocates nothing, so a
 * connector without tracing pays one call per request and phase.
 *
 * <p>Threads: called on the engine thread, the connector's sweep, or a thread of the engine's that
 * finishes requests; implementations must be thread-safe, quick, and must not call back into the
 * connector.
 */
public interface TransferTracer {

  /** A tracer that records nothing. */
  TransferTracer NONE =
      new TransferTracer() {
        @Override
        public TransferSpan startLease(String requestId) {
          return TransferSpan.NONE;
        }

        @Override
        public TransferSpan startLoad(
            String requestId, String producerEngineId, TraceContext parent) {
          return TransferSpan.NONE;
        }
      };

  /**
   * Starts P's span of request {@code requestId}'s lease, when its prefill finished; its parent is
   * the trace current on the calling thread, if the tracer sees one. It ends when the lease ends.
   */
  TransferSpan startLease(String requestId);

  /**
   * Starts D's span of the load of request {@code requestId} from producer {@code
   * producerEngineId}: a child of {@code parent} when that is a {@link TraceContext.W3c}, otherwise
   * of the trace current on the calling thread, if any.
   */
  TransferSpan startLoad(String requestId, String producerEngineId, TraceContext parent);
}
