package io.kvbridge.tck.faults;

import io.kvbridge.transfer.DescriptorList;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.MemoryKind;
import io.kvbridge.transfer.Notification;
import io.kvbridge.transfer.ReadCost;
import io.kvbridge.transfer.TransferOp;
import io.kvbridge.transfer.TransferStatus;
import io.kvbridge.transfer.TransferTelemetry;
import io.kvbridge.transfer.TransportBackend;
import io.kvbridge.transfer.TransportException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A {@link TransportBackend} that passes every call to the one it wraps, except where its group's
 * {@link Faults} say otherwise: taken notifications may vanish, be held, arrive late or twice; a
 * posted READ may fail without moving a byte or stall before reaching the wrapped backend; and a
 * killed agent fails every call, as a dead peer's would. The agent core above it keeps the books
 * and checks the contract as it does for any backend, so a faulty agent refuses what any agent
 * refuses, with the same messages. Built by {@link Faults#decorate}.
 *
 * <p>A stalled read has no underlying request until it is unstalled; one posted from prepared lists
 * fails then if a list was released meanwhile.
 *
 * <p>Threads: as safe as the wrapped backend; this decorator's state is guarded by its group's
 * lock, which is never held while the wrapped backend runs.
 *
 * @param <L> the wrapped backend's prepared list
 * @param <R> the wrapped backend's request
 */
public final class FaultInjectingBackend<L, R>
    implements TransportBackend<L, FaultInjectingBackend.Request<L, R>> {

  private final TransportBackend<L, R> delegate;
  private final Faults faults;
  private final Object lock;
  private final String name;
  private final Set<Request<L, R>> requests = new LinkedHashSet<>();
  private final Set<L> liveLists = Collections.newSetFromMap(new IdentityHashMap<>());
  private final Deque<Notification> released = new ArrayDeque<>();
  private final List<Delayed> delayed = new ArrayList<>();
  // The group member each loaded peer name stood for when its metadata was loaded: a member that
  // later takes the same name is another agent, which what is sent to the old one never reaches.
  private final Map<String, FaultInjectingBackend<?, ?>> peers = new HashMap<>();
  private volatile boolean dead; // read without the lock by calls that only pass through
  private boolean closed;

  FaultInjectingBackend(TransportBackend<L, R> delegate, Faults faults, Object lock) {
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
  public ReadCost readCost() {
    return delegate.readCost();
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
  public String peerAgentName(byte[] metadata) {
    checkAlive("read a peer's agent name");
    return delegate.peerAgentName(metadata);
  }

  @Override
  public String loadRemote(byte[] metadata, boolean replacing) {
    checkAlive("load remote metadata");
    String peer = delegate.loadRemote(metadata, replacing);
    synchronized (lock) {
      peers.put(peer, faults.member(peer));
    }
    return peer;
  }

  @Override
  public void unloadRemote(String agentName) {
    checkAlive("invalidate a remote");
    delegate.unloadRemote(agentName);
    synchronized (lock) {
      peers.remove(agentName);
    }
  }

  @Override
  public boolean covers(String remoteAgent, DescriptorList remote) {
    checkAlive("check a peer's memory");
    return delegate.covers(remoteAgent, remote);
  }

  @Override
  public L prepare(Optional<String> remoteAgent, DescriptorList pieces) {
    checkAlive("prepare a descriptor list");
    L list = delegate.prepare(remoteAgent, pieces);
    synchronized (lock) {
      liveLists.add(list);
    }
    return list;
  }

  @Override
  public void releasePrepared(L list) {
    synchronized (lock) {
      liveLists.remove(list);
    }
    if (!dead) {
      delegate.releasePrepared(list);
    }
  }

  /**
   * Posts the transfer, unless the group's read rules fail or stall it first or its peer was killed
   * (then it fails).
   */
  @Override
  public Request<L, R> post(
      TransferOp op,
      DescriptorList local,
      String remoteAgent,
      DescriptorList remote,
      Optional<byte[]> notification) {
    return post(new Posting.Described<>(op, local, remoteAgent, remote, notification));
  }

  @Override
  public Request<L, R> post(
      TransferOp op,
      L local,
      int[] localIndices,
      String remoteAgent,
      L remote,
      int[] remoteIndices,
      Optional<byte[]> notification) {
    return post(
        new Posting.Indexed<>(
            op,
            local,
            localIndices.clone(),
            remoteAgent,
            remote,
            remoteIndices.clone(),
            notification));
  }

  private Request<L, R> post(Posting<L, R> posting) {
    synchronized (lock) {
      checkAlive("post a " + posting.op());
      Faults.ReadAction action =
          posting.op() == TransferOp.READ ? faults.decideRead(name, posting.remoteAgent()) : null;
      if (faults.isDead(posting.remoteAgent())) {
        return add(new Request<>(posting, "peer " + posting.remoteAgent() + " is dead", null));
      } else if (action instanceof Faults.Fail fail) {
        return add(new Request<>(posting, fail.reason(), null));
      } else if (action instanceof Faults.Stall) {
        return add(new Request<>(posting, null, null));
      }
    }
    R underlying = posting.postTo(delegate);
    synchronized (lock) {
      return add(new Request<>(posting, null, underlying));
    }
  }

  @Override
  public TransferStatus status(Request<L, R> request) {
    R underlying;
    synchronized (lock) {
      checkAlive("poll a transfer");
      if (request.failure != null) {
        return new TransferStatus.Failed(request.failure);
      }
      if (request.underlying == null) {
        return TransferStatus.IN_PROGRESS; // stalled
      }
      underlying = request.underlying;
    }
    TransferStatus status = delegate.status(underlying);
    synchronized (lock) {
      if (requests.contains(request)
          && !request.ended
          && !(status instanceof TransferStatus.InProgress)) {
        request.ended = true;
        Posting<L, R> p = request.posting;
        if (status instanceof TransferStatus.Done && p.notification().isPresent()) {
          faults.sent(name, peers.get(p.remoteAgent()), p.notification().get());
        }
      }
    }
    return status;
  }

  /** Releases the transfer; a stalled one is cancelled and never reaches the wrapped backend. */
  @Override
  public void release(Request<L, R> request) {
    R underlying;
    synchronized (lock) {
      checkAlive("release a transfer");
      requests.remove(request);
      underlying = request.underlying;
    }
    if (underlying != null) {
      delegate.release(underlying);
    }
  }

  /**
   * What the wrapped backend measured of the transfer; empty for one this decorator failed or still
   * stalls, which never reached the wrapped backend.
   */
  @Override
  public Optional<TransferTelemetry> telemetry(Request<L, R> request) {
    R underlying;
    synchronized (lock) {
      checkAlive("read a transfer's telemetry");
      if (request.failure != null || request.underlying == null) {
        return Optional.empty();
      }
      underlying = request.underlying;
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
   * Returns released notifications, then delayed ones now due, then what the wrapped backend
   * delivered, each decided by the group's notification rules in arrival order.
   */
  @Override
  public List<Notification> takeNotifications() {
    checkAlive("drain notifications");
    List<Notification> arrived = delegate.takeNotifications();
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

  /** Closes the wrapped backend; stalled reads are cancelled. A killed one is closed already. */
  @Override
  public void close() {
    synchronized (lock) {
      if (closed || dead) {
        return;
      }
      closed = true;
      faults.left(this);
      requests.clear();
      liveLists.clear();
    }
    delegate.close();
  }

  @Override
  public String toString() {
    return "FaultInjectingBackend[" + delegate + "]";
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
    for (Request<L, R> r : requests) {
      if (r.underlying != null && !r.ended) {
        return true;
      }
    }
    return false;
  }

  /** How many of this member's reads are stalled. Under the group's lock. */
  int stalled() {
    int count = 0;
    for (Request<L, R> r : requests) {
      if (r.isStalled()) {
        count++;
      }
    }
    return count;
  }

  /** Posts every stalled read; returns how many there were. Not under the group's lock. */
  int resumeStalled() {
    List<Request<L, R>> stalled = new ArrayList<>();
    synchronized (lock) {
      if (dead || closed) {
        return 0;
      }
      for (Request<L, R> r : requests) {
        if (r.isStalled()) {
          stalled.add(r);
        }
      }
    }
    for (Request<L, R> r : stalled) {
      String failure = null;
      R underlying = null;
      synchronized (lock) {
        if (faults.isDead(r.posting.remoteAgent())) {
          failure = "peer " + r.posting.remoteAgent() + " is dead";
        } else if (!r.posting.listsLive(liveLists)) {
          failure = "a prepared list of the stalled read was released meanwhile";
        }
      }
      if (failure == null) {
        try {
          underlying = r.posting.postTo(delegate);
        } catch (TransportException refused) {
          failure = refused.getMessage();
        }
      }
      boolean releasedMeanwhile;
      synchronized (lock) {
        releasedMeanwhile = !requests.contains(r);
        if (!releasedMeanwhile) {
          r.failure = failure;
          r.underlying = underlying;
        }
      }
      if (releasedMeanwhile && underlying != null) {
        delegate.release(underlying);
      }
    }
    return stalled.size();
  }

  /** The process died: the wrapped backend closes, nothing of this agent moves again. */
  void die() {
    synchronized (lock) {
      if (dead || closed) {
        return;
      }
      dead = true;
      requests.clear();
      liveLists.clear();
      released.clear();
      delayed.clear();
    }
    delegate.close();
  }

  private Request<L, R> add(Request<L, R> request) {
    requests.add(request);
    return request;
  }

  private void checkAlive(String what) {
    if (dead) {
      throw new TransportException(
          "cannot " + what + ": agent '" + name + "' was killed; create a new agent");
    }
  }

  private static final class Delayed {
    private final Notification notification;
    private int withheldDrains;

    Delayed(Notification notification, int withheldDrains) {
      this.notification = notification;
      this.withheldDrains = withheldDrains;
    }
  }

  /** A posted transfer: failed, stalled (no underlying request yet) or running underneath. */
  public static final class Request<L, R> {
    private final Posting<L, R> posting;
    private String failure;
    private R underlying;
    private boolean ended;

    private Request(Posting<L, R> posting, String failure, R underlying) {
      this.posting = posting;
      this.failure = failure;
      this.underlying = underlying;
    }

    private boolean isStalled() {
      return failure == null && underlying == null;
    }
  }
}
