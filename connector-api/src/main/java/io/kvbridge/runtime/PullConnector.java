package io.kvbridge.runtime;

import io.kvbridge.layout.KvLayout;
import io.kvbridge.observe.RejectedInput;
import io.kvbridge.runtime.consumer.Consumer;
import io.kvbridge.runtime.consumer.ConsumerReplies;
import io.kvbridge.runtime.engine.ConnectorCounters;
import io.kvbridge.runtime.engine.Ranks;
import io.kvbridge.runtime.producer.Producer;
import io.kvbridge.spi.ConnectorListener;
import io.kvbridge.spi.ConnectorSettings;
import io.kvbridge.spi.ConnectorStatus;
import io.kvbridge.spi.ConsumerStatus;
import io.kvbridge.spi.FinishDecision;
import io.kvbridge.spi.FinishedRequest;
import io.kvbridge.spi.FinishedTransfers;
import io.kvbridge.spi.KvConnector;
import io.kvbridge.spi.LoadMatch;
import io.kvbridge.spi.LoadSpec;
import io.kvbridge.spi.ProducerStatus;
import io.kvbridge.spi.SchedulerSide;
import io.kvbridge.spi.StartedRequest;
import io.kvbridge.spi.StepMetadata;
import io.kvbridge.spi.TokenIds;
import io.kvbridge.spi.TransferParams;
import io.kvbridge.spi.WorkerSide;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.KvRegions;
import io.kvbridge.transfer.Notification;
import io.kvbridge.transfer.Transport;
import io.kvbridge.wire.MalformedMessageException;
import io.kvbridge.wire.ProtocolMessage;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The pull protocol every connector shares, over any {@link Transport}: P grants a lease in {@code
 * requestFinished} and hands out transfer parameters; D handshakes, checks the lease against its
 * safety margin, reads, and sends a completion with the lease token; P answers ACK (lease live: it
 * ends as READ) or NACK; D reports the request received only after ACK. Expired leases end on every
 * {@code getFinished} and on every scheduled {@code sweep}.
 *
 * <p>A connector type is a {@link Transport} plus a provider that builds this class around it.
 *
 * <p>Between the engine's steps a {@link ProgressThread} (unless {@link
 * ConnectorSettings#progressInterval()} is zero) does the same work as a sweep every interval while
 * any transfer is in flight, so that P answers CONFIRM, COMPLETION and heartbeats as they arrive
 * and D posts its reads, sends its COMPLETION and takes P's ACK without waiting for a step: what
 * ended is reported at the engine's next {@code getFinished}, as before.
 *
 * <p>Threads: one lock guards the protocol state; the lease table and the handshake server are
 * thread-safe on their own. Handshake round trips run outside the lock.
 */
public final class PullConnector implements KvConnector {

  private final ConnectorSettings settings;
  private final Ranks ranks;
  private final ConnectorCounters counters;
  private final Producer producer;
  private final Consumer consumer;
  private final ConsumerReplies replies;
  private final ReentrantLock lock = new ReentrantLock();
  private final Scheduler scheduler = new Scheduler();
  private final List<Worker> workers;
  private final List<ConnectorListener> listeners = new CopyOnWriteArrayList<>();
  private final AtomicBoolean closeStarted = new AtomicBoolean();
  private final ProgressThread progress;
  private volatile boolean closed;

  /**
   * Builds a connector of an engine without tensor parallelism over {@code transport}, which it
   * owns from now on and closes on {@link #close()}.
   */
  public PullConnector(ConnectorSettings settings, Transport transport) {
    this(settings, List.of(transport));
  }

  /**
   * Builds a connector over one transport per tensor-parallel rank, by rank ({@code
   * settings.tpDegree()} of them), which it owns from now on and closes on {@link #close()}.
   */
  public PullConnector(ConnectorSettings settings, List<Transport> transports) {
    if (transports.size() != settings.tpDegree()) {
      throw new IllegalArgumentException(
          "engine "
              + settings.engineId()
              + " has "
              + settings.tpDegree()
              + " ranks but "
              + transports.size()
              + " transports");
    }
    this.settings = settings;
    this.ranks = new Ranks(transports);
    this.counters = new ConnectorCounters(settings.observer());
    this.producer = new Producer(settings, ranks, counters);
    this.consumer = new Consumer(settings, ranks, counters);
    this.replies = new ConsumerReplies(consumer, settings, counters);
    List<Worker> all = new ArrayList<>();
    for (int r = 0; r < transports.size(); r++) {
      all.add(new Worker(r));
    }
    this.workers = List.copyOf(all);
    this.progress =
        settings.progressInterval().isZero()
            ? null
            : new ProgressThread(
                settings.engineId(), settings.progressInterval(), this::progressRound);
  }

  @Override
  public ConnectorSettings settings() {
    return settings;
  }

  @Override
  public SchedulerSide scheduler() {
    return scheduler;
  }

  @Override
  public WorkerSide worker(int rank) {
    if (rank < 0 || rank >= workers.size()) {
      throw new IllegalArgumentException(
          "engine " + settings.engineId() + " has ranks 0 to " + (workers.size() - 1));
    }
    return workers.get(rank);
  }

  /** The transport of the lead rank: the one protocol messages travel through. */
  public Transport transport() {
    return ranks.lead();
  }

  @Override
  public void peerGone(String engineId, String why) {
    if (settings.role().consumes()) {
      consumer.producerGone(engineId, why);
    }
    if (settings.role().produces()) {
      producer.consumerGone(engineId, why);
    }
  }

  @Override
  public ConnectorStatus status() {
    Optional<ProducerStatus> producerPart =
        settings.role().produces() ? Optional.of(producer.status()) : Optional.empty();
    Optional<ConsumerStatus> consumerPart = Optional.empty();
    if (settings.role().consumes()) {
      lock.lock();
      try {
        consumerPart = Optional.of(consumer.status());
      } finally {
        lock.unlock();
      }
    }
    return new ConnectorStatus(
        settings.type(),
        settings.engineId(),
        settings.role(),
        settings.incarnation(),
        producerPart,
        consumerPart,
        counters.rejected());
  }

  @Override
  public AutoCloseable listen(ConnectorListener listener) {
    listeners.add(Objects.requireNonNull(listener, "listener"));
    return () -> listeners.remove(listener);
  }

  @Override
  public void close() {
    if (!closeStarted.compareAndSet(false, true)) {
      return;
    }
    // Outside the lock: a listener may talk to the network (tell a discovery service) first.
    listeners.forEach(ConnectorListener::closing);
    try {
      stopProgress();
      closeUnderLock();
    } finally {
      listeners.forEach(ConnectorListener::closed);
    }
  }

  private void closeUnderLock() {
    lock.lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
      producer.close();
      consumer.close();
      for (int r = 0; r < ranks.count(); r++) {
        KvRegions memory = ranks.memory(r);
        if (memory != null) {
          memory.regions().forEach(ranks.transport(r)::deregister);
        }
        ranks.transport(r).close();
      }
    } finally {
      lock.unlock();
    }
  }

  /** Stops the progress thread, outside the lock (its round in progress holds it). */
  private void stopProgress() {
    if (progress == null) {
      return;
    }
    try {
      progress.stop();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Runs the next progress round now (something was begun that the other side will answer). */
  private void wakeProgress() {
    if (progress != null) {
      progress.wake();
    }
  }

  /** One round of the progress thread: whether any transfer is still in flight after it. */
  private boolean progressRound() {
    lock.lock();
    try {
      if (closed) {
        return false;
      }
      progressLocked();
      return (settings.role().consumes() && consumer.busy())
          || (settings.role().produces() && producer.holdsLeases());
    } finally {
      lock.unlock();
    }
  }

  /** Handles what arrived, moves loads along, ends expired leases; under the lock. */
  private void progressLocked() {
    handleNotifications();
    consumer.progress();
    producer.expire();
    producer.announceLayers();
  }

  /** Drains the transport's notifications and routes each protocol message to its side. */
  private void handleNotifications() {
    List<Notification> all = new ArrayList<>();
    for (Transport transport : ranks.transports()) {
      all.addAll(transport.drainNotifications());
    }
    for (Notification n : all) {
      ProtocolMessage message;
      try {
        message = ProtocolMessage.decode(n.payload());
      } catch (MalformedMessageException e) {
        counters.rejected(
            RejectedInput.MALFORMED_MESSAGE, "from agent " + n.fromAgent() + ": " + e.getMessage());
        continue;
      }
      String fromAgent = n.fromAgent();
      message.route(
          new ProtocolMessage.Router() {
            @Override
            public void toProducer(ProtocolMessage.ToProducer m) {
              if (settings.role().produces()) {
                producer.onMessage(fromAgent, m);
              } else {
                notForThisRole(m);
              }
            }

            @Override
            public void toConsumer(ProtocolMessage.ToConsumer m) {
              if (settings.role().consumes()) {
                replies.onMessage(fromAgent, m);
              } else {
                notForThisRole(m);
              }
            }
          });
    }
  }

  private void notForThisRole(ProtocolMessage message) {
    counters.rejected(
        RejectedInput.UNEXPECTED_REPLY,
        message.getClass().getSimpleName() + " is not for a " + settings.role() + " engine");
  }

  private void requireOpen() {
    if (closed) {
      throw new IllegalStateException("connector of engine " + settings.engineId() + " is closed");
    }
  }

  private void requireConsumer() {
    if (!settings.role().consumes()) {
      throw new IllegalStateException(
          "engine "
              + settings.engineId()
              + " is a "
              + settings.role()
              + "; it does not load remote KV");
    }
  }

  private final class Scheduler implements SchedulerSide {
    @Override
    public LoadMatch matchRemote(
        String requestId, TokenIds prompt, int localTokens, TransferParams params) {
      requireConsumer();
      lock.lock();
      try {
        requireOpen();
        return consumer.matchRemote(requestId, prompt, localTokens, params);
      } finally {
        lock.unlock();
        wakeProgress();
      }
    }

    @Override
    public void afterAllocate(String requestId, List<Integer> localBlockIds) {
      requireConsumer();
      lock.lock();
      try {
        requireOpen();
        consumer.afterAllocate(requestId, localBlockIds);
      } finally {
        lock.unlock();
      }
    }

    @Override
    public StepMetadata buildStepMetadata() {
      if (!settings.role().consumes()) {
        return new StepMetadata(List.of());
      }
      lock.lock();
      try {
        return new StepMetadata(consumer.drainReady());
      } finally {
        lock.unlock();
      }
    }

    @Override
    public Optional<TransferParams> requestStarted(StartedRequest request) {
      if (!settings.role().produces() || closed) {
        return Optional.empty();
      }
      Optional<TransferParams> params = producer.requestStarted(request);
      wakeProgress();
      return params;
    }

    @Override
    public FinishDecision requestFinished(FinishedRequest request) {
      if (!settings.role().produces() || closed) {
        return FinishDecision.freeNow();
      }
      FinishDecision decision = producer.requestFinished(request);
      wakeProgress();
      return decision;
    }

    @Override
    public boolean cancelLoad(String requestId, String why) {
      if (!settings.role().consumes()) {
        return false;
      }
      lock.lock();
      try {
        return !closed && consumer.cancel(requestId, why);
      } finally {
        lock.unlock();
      }
    }

    @Override
    public boolean revoke(String requestId, String why) {
      return producer.revoke(requestId, why);
    }
  }

  /** One rank's worker side; the protocol's work is shared by every rank's. */
  private final class Worker implements WorkerSide {
    private final int rank;

    Worker(int rank) {
      this.rank = rank;
    }

    @Override
    public List<KvMemory> allocateKvRegions(KvLayout layout) {
      requireOpen();
      List<KvMemory> regions = new ArrayList<>(layout.regions());
      try {
        for (int i = 0; i < layout.regions(); i++) {
          regions.add(ranks.transport(rank).allocate(layout.regionBytes()));
        }
      } catch (RuntimeException e) {
        regions.forEach(KvMemory::close);
        throw e;
      }
      return regions;
    }

    @Override
    public void registerKvCache(List<KvMemory> regions, KvLayout layout) {
      KvRegions memory = new KvRegions(layout, regions);
      lock.lock();
      try {
        requireOpen();
        ranks.check(rank, layout);
        Transport transport = ranks.transport(rank);
        List<KvMemory> registered = new ArrayList<>(regions.size());
        try {
          for (KvMemory region : regions) {
            transport.register(region);
            registered.add(region);
          }
        } catch (RuntimeException e) {
          registered.forEach(transport::deregister);
          throw e;
        }
        if (ranks.register(rank, memory)) {
          consumer.start();
          if (settings.role().produces()) {
            producer.start();
          }
          if (progress != null) {
            progress.start();
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException(
            "cannot answer handshakes at " + settings.handshakeAddress() + ": " + e.getMessage(),
            e);
      } finally {
        lock.unlock();
      }
      for (ConnectorListener listener : listeners) {
        listener.kvCacheRegistered(rank, layout);
      }
    }

    @Override
    public void layerSaved(String requestId, int layer) {
      if (settings.role().produces() && !closed && producer.layerSaved(rank, requestId, layer)) {
        wakeProgress(); // the progress thread tells the consumer at once
      }
    }

    @Override
    public void startLoad(StepMetadata metadata) {
      if (metadata.loadsToStart().isEmpty()) {
        return;
      }
      requireConsumer();
      lock.lock();
      try {
        requireOpen();
        // Renewals confirmed since the last step move deadlines the safety check reads.
        handleNotifications();
        for (LoadSpec spec : metadata.loadsToStart()) {
          consumer.post(spec);
        }
      } finally {
        lock.unlock();
        wakeProgress();
      }
    }

    @Override
    public FinishedTransfers getFinished(Set<String> finishedRequestIds) {
      lock.lock();
      try {
        if (closed) {
          return FinishedTransfers.NONE;
        }
        progressLocked();
        return new FinishedTransfers(
            producer.drainEnded(), consumer.drainReceived(), consumer.drainFailures());
      } finally {
        lock.unlock();
      }
    }

    @Override
    public void sweep() {
      lock.lock();
      try {
        if (!closed) {
          progressLocked();
        }
      } finally {
        lock.unlock();
      }
    }
  }
}
