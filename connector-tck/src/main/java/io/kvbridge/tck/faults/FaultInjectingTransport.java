package io.kvbridge.tck.faults;

import io.kvbridge.transfer.DescriptorList;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.MemoryKind;
import io.kvbridge.transfer.Notification;
import io.kvbridge.transfer.TransferHandle;
import io.kvbridge.transfer.TransferOp;
import io.kvbridge.transfer.TransferStatus;
import io.kvbridge.transfer.TransferTelemetry;
import io.kvbridge.transfer.Transport;
import io.kvbridge.transfer.TransportException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A {@link Transport} that passes every call to the one it wraps, except where its group's {@link
 * Faults} say otherwise: drained notifications may vanish, be held, arrive late or twice; a posted
 * READ may fail without moving a byte or stall before reaching the wrapped transport; and a killed
 * agent fails every call, as a dead peer's would. Built by {@link Faults#decorate}.
 *
 * <p>Handles are this decorator's own; a stalled read has no underlying handle until it is
 * unstalled.
 *
 * <p>Threads: as safe as the wrapped transport; this decorator's state is guarded by its group's
 * lock, which is never held while the wrapped transport runs.
 */
public final class FaultInjectingTransport implements Transport {

  private final Transport delegate;
  private final Faults faults;
  private final Object lock;
  private final String name;
  private final Map<Long, Transfer> transfers = new HashMap<>();
  private final Deque<Notification> released = new ArrayDeque<>();
  private final List<Delayed> delayed = new ArrayList<>();
  // The group member each loaded peer name stood for when its metadata was loaded: a member that
  // later takes the same name is another agent, which what is sent to the old one never reaches.
  private final Map<String, FaultInjectingTransport> peers = new HashMap<>();
  private long nextId;
  private volatile boolean dead; // read without the lock by calls that only pass through
  private boolean closed;

  FaultInjectingTransport(Transport delegate, Faults faults, Object lock) {
    this.delegate = delegate;
    this.faults = faults;
    this.lock = lock;
    this.name = delegate.agentName();
  }

  @Override
  public String agentName() {
    return name;
  }

  @Override
  public MemoryKind memoryKind() {
    return delegate.memoryKind();
  }

  @Override
  public KvMemory allocate(long sizeBytes) {
    checkAlive("allocate");
    return delegate.allocate(sizeBytes);
  }

  @Override
  public void register(KvMemory memory) {
    checkAlive("register memory");
    delegate.register(memory);
  }

  @Override
  public void deregister(KvMemory memory) {
    checkAlive("deregister memory");
    delegate.deregister(memory);
  }

  @Override
  public byte[] localMetadata() {
    checkAlive("export metadata");
    return delegate.localMetadata();
  }

  @Override
  public String loadRemoteMetadata(byte[] metadata) {
    checkAlive("load remote metadata");
    String peer = delegate.loadRemoteMetadata(metadata);
    synchronized (lock) {
      peers.put(peer, faults.member(peer));
    }
    return peer;
  }

  @Override
  public String peerAgentName(byte[] metadata) {
    checkAlive("read a peer's agent name");
    return delegate.peerAgentName(metadata);
  }

  @Override
  public void invalidateRemote(String agentName) {
    checkAlive("invalidate a remote");
    delegate.invalidateRemote(agentName);
    synchronized (lock) {
      peers.remove(agentName);
    }
  }

  /**
   * Posts the transfer, unless the group's read rules fail or stall it first (they fire before the
   * wrapped transport's own checks) or its peer was killed (then it fails).
   */
  @Override
  public TransferHandle post(
      TransferOp op,
      DescriptorList local,
      String remoteAgent,
      DescriptorList remote,
      Optional<byte[]> notification) {
    Posting posting = new Posting(op, local, remoteAgent, remote, notification.map(byte[]::clone));
    long bytes = local.totalBytes();
    synchronized (lock) {
      checkAlive("post a " + op);
      Faults.ReadAction action =
          op == TransferOp.READ ? faults.decideRead(name, remoteAgent) : null;
      if (faults.isDead(remoteAgent)) {
        return add(bytes, Transfer.failed(posting, "peer " + remoteAgent + " is dead"));
      } else if (action instanceof Faults.Fail fail) {
        return add(bytes, Transfer.failed(posting, fail.reason()));
      } else if (action instanceof Faults.Stall) {
        return add(bytes, Transfer.stalled(posting));
      }
    }
    TransferHandle underlying = postUnderlying(posting);
    synchronized (lock) {
      return add(bytes, Transfer.posted(posting, underlying));
    }
  }

  @Override
  public TransferStatus status(TransferHandle handle) {
    TransferHandle underlying;
    synchronized (lock) {
      checkAlive("poll a transfer");
      Transfer t = transfer(handle);
      if (t.failure != null) {
        return new TransferStatus.Failed(t.failure);
      }
      if (t.underlying == null) {
        return TransferStatus.IN_PROGRESS; // stalled
      }
      underlying = t.underlying;
    }
    TransferStatus status = delegate.status(underlying);
    synchronized (lock) {
      Transfer t = transfers.get(handle.id());
      if (t != null && !t.ended && !(status instanceof TransferStatus.InProgress)) {
        t.ended = true;
        if (status instanceof TransferStatus.Done && t.posting.notification().isPresent()) {
          faults.sent(name, peers.get(t.posting.remoteAgent()), t.posting.notification().get());
        }
      }
    }
    return status;
  }

  /** Releases the transfer; a stalled one is cancelled and never reaches the wrapped transport. */
  @Override
  public void release(TransferHandle handle) {
    TransferHandle underlying;
    synchronized (lock) {
      checkAlive("release a transfer");
      Transfer t = transfer(handle);
      transfers.remove(handle.id());
      underlying = t.underlying;
    }
    if (underlying != null) {
      delegate.release(underlying);
    }
  }

  /**
   * What the wrapped transport measured of the transfer; empty for one this decorator failed or
   * still stalls, which never reached the wrapped transport.
   */
  @Override
  public Optional<TransferTelemetry> telemetry(TransferHandle handle) {
    TransferHandle underlying;
    synchronized (lock) {
      checkAlive("read a transfer's telemetry");
      Transfer t = transfers.get(handle.id());
      if (t == null || t.failure != null || t.underlying == null) {
        return Optional.empty();
      }
      underlying = t.underlying;
    }
    return delegate.telemetry(underlying);
  }

  /** Sends the message; to a killed peer it vanishes, as it would on the wire. */
  @Override
  public void notify(String remoteAgent, byte[] message) {
    boolean counted;
    synchronized (lock) {
      checkAlive("notify " + remoteAgent);
      if (faults.isDead(remoteAgent)) {
        return;
      }
      // Counted before it is sent: an asynchronous receiver may drain it before notify returns.
      counted = faults.sent(name, peers.get(remoteAgent), message);
    }
    try {
      delegate.notify(remoteAgent, message);
    } catch (RuntimeException refused) {
      if (counted) {
        synchronized (lock) {
          faults.arrived(remoteAgent, new Notification(name, message));
        }
      }
      throw refused;
    }
  }

  /**
   * Returns released notifications, then delayed ones now due, then what the wrapped transport
   * delivered, each decided by the group's notification rules in arrival order.
   */
  @Override
  public List<Notification> drainNotifications() {
    synchronized (lock) {
      checkAlive("drain notifications");
    }
    List<Notification> arrived = delegate.drainNotifications();
    synchronized (lock) {
      List<Notification> out = new ArrayList<>(released);
      released.clear();
      for (Iterator<Delayed> it = delayed.iterator(); it.hasNext(); ) {
        Delayed d = it.next();
        if (d.withheldDrains == 0) {
          out.add(d.notification);
          it.remove();
        } else {
          d.withheldDrains--;
        }
      }
      for (Notification n : arrived) {
        faults.arrived(name, n);
        Faults.NotificationAction action = faults.decideNotification();
        if (action instanceof Faults.Hold) {
          faults.hold(this, n);
        } else if (action instanceof Faults.Delay delay && delay.drains() > 0) {
          delayed.add(new Delayed(n, delay.drains() - 1)); // this drain is the first withheld
        } else if (action instanceof Faults.Duplicate) {
          out.add(n);
          out.add(n);
        } else if (!(action instanceof Faults.Drop)) {
          out.add(n);
        }
      }
      return out;
    }
  }

  /** Closes the wrapped transport; stalled reads are cancelled. Closing twice does nothing. */
  @Override
  public void close() {
    synchronized (lock) {
      if (closed || dead) {
        return;
      }
      closed = true;
      faults.left(this);
      transfers.clear();
    }
    delegate.close();
  }

  @Override
  public String toString() {
    return "FaultInjectingTransport[" + delegate + "]";
  }

  // ---- what the group asks -------------------------------------------------------------------

  /** Queues a released notification for the next drain. Under the group's lock. */
  void deliverLater(Notification notification) {
    released.add(notification);
  }

  /** Whether something handed to this member is still on its way. Under the group's lock. */
  boolean busy() {
    if (!released.isEmpty()) {
      return true;
    }
    for (Transfer t : transfers.values()) {
      if (t.underlying != null && !t.ended) {
        return true;
      }
    }
    return false;
  }

  /** How many of this member's reads are stalled. Under the group's lock. */
  int stalled() {
    int count = 0;
    for (Transfer t : transfers.values()) {
      if (t.failure == null && t.underlying == null) {
        count++;
      }
    }
    return count;
  }

  /** Posts every stalled read; returns how many there were. Not under the group's lock. */
  int resumeStalled() {
    List<Map.Entry<Long, Transfer>> stalled = new ArrayList<>();
    synchronized (lock) {
      if (dead || closed) {
        return 0;
      }
      for (Map.Entry<Long, Transfer> e : transfers.entrySet()) {
        Transfer t = e.getValue();
        if (t.failure == null && t.underlying == null) {
          stalled.add(e);
        }
      }
    }
    for (Map.Entry<Long, Transfer> e : stalled) {
      Transfer t = e.getValue();
      String failure = null;
      TransferHandle underlying = null;
      synchronized (lock) {
        if (faults.isDead(t.posting.remoteAgent())) {
          failure = "peer " + t.posting.remoteAgent() + " is dead";
        }
      }
      if (failure == null) {
        try {
          underlying = postUnderlying(t.posting);
        } catch (TransportException refused) {
          failure = refused.getMessage();
        }
      }
      boolean releasedMeanwhile;
      synchronized (lock) {
        releasedMeanwhile = transfers.get(e.getKey()) != t;
        if (!releasedMeanwhile) {
          t.failure = failure;
          t.underlying = underlying;
        }
      }
      if (releasedMeanwhile && underlying != null) {
        delegate.release(underlying);
      }
    }
    return stalled.size();
  }

  /** The process died: the wrapped transport closes, nothing of this agent moves again. */
  void die() {
    synchronized (lock) {
      if (dead || closed) {
        return;
      }
      dead = true;
      transfers.clear();
      released.clear();
      delayed.clear();
    }
    delegate.close();
  }

  private TransferHandle postUnderlying(Posting p) {
    return delegate.post(p.op(), p.local(), p.remoteAgent(), p.remote(), p.notification());
  }

  private TransferHandle add(long bytes, Transfer transfer) {
    long id = nextId++;
    transfers.put(id, transfer);
    return new TransferHandle(id, bytes);
  }

  private Transfer transfer(TransferHandle handle) {
    Transfer t = transfers.get(handle.id());
    if (t == null) {
      throw new TransportException(
          "agent '"
              + name
              + "' has no transfer "
              + handle.id()
              + ": it was released already or posted elsewhere");
    }
    return t;
  }

  private void checkAlive(String what) {
    if (dead) {
      throw new TransportException(
          "cannot " + what + ": agent '" + name + "' was killed; create a new agent");
    }
  }

  private record Posting(
      TransferOp op,
      DescriptorList local,
      String remoteAgent,
      DescriptorList remote,
      Optional<byte[]> notification) {}

  private static final class Delayed {
    private final Notification notification;
    private int withheldDrains;

    Delayed(Notification notification, int withheldDrains) {
      this.notification = notification;
      this.withheldDrains = withheldDrains;
    }
  }

  /** A posted transfer: failed, stalled (no underlying handle yet) or running underneath. */
  private static final class Transfer {
    private final Posting posting;
    private String failure;
    private TransferHandle underlying;
    private boolean ended;

    private Transfer(Posting posting, String failure, TransferHandle underlying) {
      this.posting = posting;
      this.failure = failure;
      this.underlying = underlying;
    }

    static Transfer failed(Posting posting, String reason) {
      return new Transfer(posting, reason, null);
    }

    static Transfer stalled(Posting posting) {
      return new Transfer(posting, null, null);
    }

    static Transfer posted(Posting posting, TransferHandle underlying) {
      return new Transfer(posting, null, underlying);
    }
  }
}
