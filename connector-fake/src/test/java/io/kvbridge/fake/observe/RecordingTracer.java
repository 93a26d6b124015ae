package io.kvbridge.fake.observe;

import io.kvbridge.observe.TraceContext;
import io.kvbridge.observe.TransferSpan;
import io.kvbridge.observe.TransferTracer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/** A tracer that keeps every span and counts every call made to it and its spans. */
final class RecordingTracer implements TransferTracer {

  private static final AtomicInteger IDS = new AtomicInteger(1);

  final List<Span> spans = Collections.synchronizedList(new ArrayList<>());
  final AtomicInteger calls = new AtomicInteger();

  @Override
  public TransferSpan startLease(String requestId) {
    calls.incrementAndGet();
    return start("kvbridge.lease", null, TraceContext.ABSENT);
  }

  @Override
  public TransferSpan startLoad(String requestId, String producerEngineId, TraceContext parent) {
    calls.incrementAndGet();
    return start("kvbridge.load", null, parent);
  }

  private Span start(String name, Span parent, TraceContext remoteParent) {
    Span span = new Span(name, parent, remoteParent, IDS.getAndIncrement());
    spans.add(span);
    return span;
  }

  /** The spans named {@code name}, in the order they started. */
  List<Span> named(String name) {
    synchronized (spans) {
      return spans.stream().filter(s -> s.name.equals(name)).toList();
    }
  }

  /** One recorded span. */
  final class Span implements TransferSpan {
    final String name;
    final Span parent;
    final TraceContext remoteParent;
    final int id;
    final Map<String, String> tags = Collections.synchronizedMap(new LinkedHashMap<>());
    final List<String> events = Collections.synchronizedList(new ArrayList<>());
    volatile Optional<String> error = Optional.empty();
    volatile int ends;

    Span(String name, Span parent, TraceContext remoteParent, int id) {
      this.name = name;
      this.parent = parent;
      this.remoteParent = remoteParent;
      this.id = id;
    }

    @Override
    public TransferSpan startChild(String childName) {
      calls.incrementAndGet();
      return start(childName, this, TraceContext.ABSENT);
    }

    @Override
    public void tag(String key, String value) {
      calls.incrementAndGet();
      tags.put(key, value);
    }

    @Override
    public void tag(String key, long value) {
      calls.incrementAndGet();
      tags.put(key, Long.toString(value));
    }

    @Override
    public void event(String eventName) {
      calls.incrementAndGet();
      events.add(eventName);
    }

    @Override
    public void error(String reason) {
      calls.incrementAndGet();
      error = Optional.of(reason);
    }

    @Override
    public void end() {
      calls.incrementAndGet();
      ends++;
    }

    @Override
    public TraceContext.W3c context() {
      calls.incrementAndGet();
      return TraceContext.of("abc", Integer.toHexString(id), true, Optional.empty());
    }

    /** This span's children, in the order they started. */
    List<Span> children() {
      synchronized (spans) {
        return spans.stream().filter(s -> s.parent == this).toList();
      }
    }
  }
}
