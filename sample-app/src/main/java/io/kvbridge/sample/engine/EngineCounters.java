package io.kvbridge.sample.engine;

import java.util.concurrent.atomic.AtomicLong;

/**
 * An engine's counters: written on the engine thread, read by {@link Engine#stats()} from any
 * thread.
 */
final class EngineCounters {
  final AtomicLong completed = new AtomicLong();
  final AtomicLong failed = new AtomicLong();
  final AtomicLong loadedBlocks = new AtomicLong();
  final AtomicLong loadedTokens = new AtomicLong();
  final AtomicLong cachedTokens = new AtomicLong();
  final AtomicLong computedTokens = new AtomicLong();
  final AtomicLong recomputed = new AtomicLong();
  final AtomicLong steps = new AtomicLong();
  final AtomicLong streamed = new AtomicLong();
  volatile int waitingCount;
  volatile int loadingCount;
  volatile int heldForTransferCount;
}
