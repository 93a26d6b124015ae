package io.kvbridge.benchmarks.observe;

import io.kvbridge.observe.TraceContext;
import io.kvbridge.observe.TransferSpan;
import io.kvbridge.observe.TransferSpans;
import io.kvbridge.observe.TransferTracer;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * What one request pays for tracing when it is off ({@link TransferTracer#NONE}, the default): the
 * tracer and span calls the producer and the consumer make for one request, in the order they make
 * them, on P (the lease span, its grant child, the block count, the trace context put into the
 * transfer parameters, the end reason) and on D (the load span from that context, the confirm, read
 * and validate phases, the outcome). The report sets this beside the fake transport's smallest
 * READ: the cheapest thing a traced request also does.
 *
 * <p>The tracer is read from a field, as the runtime reads it from its settings, so that the JIT
 * sees the same call sites it sees there rather than constants it could fold away.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms256m", "-Xmx256m"})
public class TracingOffBenchmark {

  private TransferTracer tracer = TransferTracer.NONE;
  private String requestId = "cmpl-0123456789abcdef";
  private String producer = "prefill-0";
  private int blocks = 64;

  /** The span calls of one request on P and on D; returns what D parented its span on. */
  @Benchmark
  public TraceContext spansOfOneRequest() {
    TransferSpan lease = tracer.startLease(requestId);
    TransferSpan grant = lease.startChild(TransferSpans.LEASE_GRANT);
    grant.end();
    lease.tag(TransferSpans.BLOCKS, blocks);
    TraceContext carried = lease.context();

    TransferSpan load = tracer.startLoad(requestId, producer, carried);
    TransferSpan phase = load.startChild(TransferSpans.LOAD_CONFIRM);
    phase.event(TransferSpans.CONFIRM_SENT);
    phase.end();
    phase = load.startChild(TransferSpans.LOAD_READ);
    phase.tag(TransferSpans.DESCRIPTORS, blocks);
    phase.event(TransferSpans.POSTED);
    phase.end();
    phase = load.startChild(TransferSpans.LOAD_VALIDATE);
    phase.end();
    load.tag(TransferSpans.OUTCOME, "received");
    load.end();

    lease.tag(TransferSpans.END_REASON, "read");
    lease.end();
    return carried;
  }
}
