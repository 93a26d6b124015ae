package io.kvbridge.fake;

import io.kvbridge.transfer.Notification;
import io.kvbridge.transfer.TransferOp;
import io.kvbridge.transfer.TransferStatus;
import io.kvbridge.transfer.TransportException;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One posted transfer. Every state change and every piece copy happens under its lock, so a
 * transfer that left COPYING (released, failed) writes nothing more. The state is also volatile, so
 * {@link #status()} reads it without the lock the copying thread holds for each piece. The copy
 * runs once, on the thread that claims it first: the fabric's executor or a poller.
 */
final class FakeTransfer {

  private enum State {
    COPYING,
    DONE,
    FAILED,
    RELEASED
  }

  /**
   * What a transfer copies: piece {@code i} is {@code length[i]} bytes between {@code local[i]} at
   * {@code localOffset[i]} and {@code remote[i]} at {@code remoteOffset[i]}.
   */
  static final class CopyPlan {
    final Bytes[] local;
    final long[] localOffset;
    final Bytes[] remote;
    final long[] remoteOffset;
    final long[] length;

    CopyPlan(int pieces) {
      local = new Bytes[pieces];
      localOffset = new long[pieces];
      remote = new Bytes[pieces];
      remoteOffset = new long[pieces];
      length = new long[pieces];
    }

    int size() {
      return length.length;
    }

    void copy(TransferOp op, int i) {
      if (op == TransferOp.READ) {
        Bytes.copy(remote[i], remoteOffset[i], local[i], localOffset[i], length[i]);
      } else {
        Bytes.copy(local[i], localOffset[i], remote[i], remoteOffset[i], length[i]);
      }
    }
  }

  private final FakeBackend agent;
  private final TransferOp op;
  private final CopyPlan plan;
  final String remoteAgent;
  final long remoteInstance;
  private final Optional<byte[]> notification;
  private final ReentrantLock lock = new ReentrantLock();
  private final AtomicBoolean claimed = new AtomicBoolean();
  // Written only under lock; read without it by status(). failure is written before state.
  private volatile State state = State.COPYING;
  private String failure = "";

  FakeTransfer(
      FakeBackend agent,
      TransferOp op,
      CopyPlan plan,
      String remoteAgent,
      long remoteInstance,
      Optional<byte[]> notification) {
    this.agent = agent;
    this.op = op;
    this.plan = plan;
    this.remoteAgent = remoteAgent;
    this.remoteInstance = remoteInstance;
    this.notification = notification;
  }

  void start() {
    agent.fabric().start(this::run, notification.isPresent());
  }

  TransferStatus status() {
    State now = state;
    if (now == State.COPYING && !claimed.get()) {
      run(); // no executor thread has started it: copy it here rather than wait for one
      now = state;
    } else if (now == State.COPYING) {
      // Another thread is copying: a poller that spins would take the core the copy needs.
      Thread.yield();
    }
    return switch (now) {
      case COPYING -> TransferStatus.IN_PROGRESS;
      case DONE -> TransferStatus.DONE;
      case FAILED -> new TransferStatus.Failed(failure);
      case RELEASED -> throw new TransportException("the transfer was released");
    };
  }

  void fail(String why) {
    lock.lock();
    try {
      if (state == State.COPYING) {
        failure = why;
        state = State.FAILED;
      }
    } finally {
      lock.unlock();
    }
  }

  void cancel() {
    lock.lock();
    try {
      if (state == State.COPYING) {
        state = State.RELEASED;
      }
    } finally {
      lock.unlock();
    }
  }

  /** Copies the pieces, unless another thread already claimed the copy. */
  private void run() {
    if (!claimed.compareAndSet(false, true)) {
      return;
    }
    // Reachability may cost a look at the file system, so it is checked before and after the
    // copy; an agent of this JVM that goes meanwhile fails the transfer at once (peerLost).
    if (!stillGoing()) {
      return;
    }
    for (int i = 0; i < plan.size(); i++) {
      lock.lock();
      try {
        if (state != State.COPYING) {
          return;
        }
        if (agent.isClosed()) {
          fail("agent " + agent.agentName() + " closed");
          return;
        }
        plan.copy(op, i);
      } catch (RuntimeException e) {
        fail("copying failed: " + e.getMessage());
        return;
      } finally {
        lock.unlock();
      }
    }
    lock.lock();
    try {
      if (stillGoing()) {
        state = State.DONE;
        notification.ifPresent(
            n ->
                agent
                    .fabric()
                    .send(remoteAgent, remoteInstance, new Notification(agent.agentName(), n)));
      }
    } finally {
      lock.unlock();
    }
  }

  /** Whether the transfer may go on; fails it if an end has gone. */
  private boolean stillGoing() {
    lock.lock();
    try {
      if (state != State.COPYING) {
        return false;
      }
      Optional<String> broken = broken();
      broken.ifPresent(this::fail);
      return broken.isEmpty();
    } finally {
      lock.unlock();
    }
  }

  private Optional<String> broken() {
    if (agent.isClosed()) {
      return Optional.of("agent " + agent.agentName() + " closed");
    }
    if (!agent.fabric().reachable(remoteAgent, remoteInstance)) {
      return Optional.of("peer " + remoteAgent + " is gone (closed, killed or restarted)");
    }
    return Optional.empty();
  }
}
