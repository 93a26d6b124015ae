package io.kvbridge.observe;

/**
 * One span of a request's transfer path, opened by a {@link TransferTracer}: P's lease and its
 * grant, D's load and its phases. The runtime calls these at the protocol's state changes, once per
 * request and phase, never per block or descriptor; every value it passes is a constant or a string
 * it holds already, so with {@link #NONE} tracing costs a virtual call and allocates nothing.
 *
 * <p>Threads: a span is used by one thread at a time (the engine thread or the connector's sweep,
 * under the connector's lock), possibly a different one from the thread that started it. Calls
 * after {@link #end()} are ignored.
 */
public interface TransferSpan {

  /** A span that records nothing; every child of it is itself. */
  TransferSpan NONE =
      new TransferSpan() {
        @Override
        public TransferSpan startChild(String name) {
          return this;
        }

        @Override
        public void tag(String key, String value) {}

        @Override
        public void tag(String key, long value) {}

        @Override
        public void event(String name) {}

        @Override
        public void error(String reason) {}

        @Override
        public void end() {}

        @Override
        public TraceContext context() {
          return TraceContext.ABSENT;
        }
      };

  /** Starts a span named {@code name} (one of {@link TransferSpans}) as a child of this one. */
  TransferSpan startChild(String name);

  /** Sets attribute {@code key} (one of {@link TransferSpans}) to {@code value}. */
  void tag(String key, String value);

  /** Sets attribute {@code key} to a number, e.g. bytes read. */
  void tag(String key, long value);

  /** Records that {@code name} happened now, e.g. that the lease was granted. */
  void event(String name);

  /** Marks the span failed, with a human-readable reason. */
  void error(String reason);

  /** Ends the span now. */
  void end();

  /**
   * This span's context as the transfer parameters carry it; {@link TraceContext#ABSENT} if none.
   */
  TraceContext context();
}
