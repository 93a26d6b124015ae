package io.kvbridge.fake;

import io.kvbridge.transfer.AgentCore;
import io.kvbridge.transfer.DescriptorList;
import io.kvbridge.transfer.Notification;
import io.kvbridge.transfer.Transport;
import io.kvbridge.transfer.TransportException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The "network" fake agents live on: it knows the agents by name, hands out non-overlapping
 * synthetic addresses for their memory, carries their notifications and runs their copies on an
 * executor. It injects no faults: tests wrap its agents in a fault-injecting decorator, as they
 * would any transport.
 *
 * <p>Agents reach each other only within one fabric. {@link #shared()} is the one the {@code fake}
 * connector uses by default; {@link #named(String)} gives tests (and the {@code fake.fabric}
 * property) a fabric of their own; {@code new FakeFabric()} an anonymous one. These live in the
 * JVM's heap. {@link #sharedDirectory(Path)} (the {@code fake.shared-dir} property) spans the
 * processes of one machine through memory-mapped files instead, with the same semantics.
 *
 * <p>Copies run on a shared pool of daemon threads, or on the executor a fabric was built with. The
 * pool's fabrics hand a transfer without a notification to the pool only after a short delay, so
 * that a caller polling its status right after posting finds the copy unclaimed and runs it itself,
 * on one thread, without waking a pool thread.
 *
 * <p>Threads: safe for use from any thread.
 */
public final class FakeFabric {

  /** The largest notification payload an agent accepts, in bytes. */
  public static final int MAX_NOTIFICATION_BYTES = 256 * 1024;

  /** The name of the {@link #shared()} fabric. */
  public static final String DEFAULT_NAME = "default";

  private static final Map<String, FakeFabric> NAMED = new ConcurrentHashMap<>();
  private static final Map<Path, FakeFabric> BY_DIRECTORY = new ConcurrentHashMap<>();
  private static final ExecutorService COPIER =
      Executors.newCachedThreadPool(
          r -> {
            Thread t = new Thread(r, "kvbridge-fake-copy");
            t.setDaemon(true);
            return t;
          });

  /**
   * How long the default fabrics leave a transfer without a notification to its initiator before
   * the copier pool starts it: long enough for a caller that polls right after posting to claim it.
   */
  static final Duration DEFERRED_START = Duration.ofMillis(1);

  // Only arms timers: the copy itself runs on COPIER (or on the poller that claims it first).
  private static final ScheduledExecutorService DEFERRED_STARTS =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "kvbridge-fake-copy-timer");
            t.setDaemon(true);
            return t;
          });

  private static final long FIRST_ADDRESS = 0x10_0000_0000L;
  private static final long PAGE = 4096;

  private final String name;
  private final Executor copier;
  private final boolean defersStarts;
  private final Medium medium;
  private final Map<String, FakeBackend> agents = new ConcurrentHashMap<>();
  private final AtomicLong nextAddress = new AtomicLong(FIRST_ADDRESS);

  /** An anonymous fabric copying on a shared pool of daemon threads. */
  public FakeFabric() {
    this(COPIER);
  }

  /**
   * An anonymous fabric that runs copies on {@code copyExecutor}: {@code Runnable::run} completes
   * every transfer inside {@code post}, before it returns.
   */
  public FakeFabric(Executor copyExecutor) {
    this("anonymous", copyExecutor, null);
  }

  private FakeFabric(String name, Executor copier, Path directory) {
    this.name = name;
    this.copier = Objects.requireNonNull(copier, "copyExecutor");
    // A caller's own executor sees every copy at once: tests hold or run them as they choose.
    this.defersStarts = copier == COPIER;
    this.medium =
        directory == null ? new JvmMedium(this, name) : new DirectoryMedium(this, directory);
  }

  /** The fabric the {@code fake} connector uses unless told otherwise. */
  public static FakeFabric shared() {
    return named(DEFAULT_NAME);
  }

  /** The fabric called {@code name} in this JVM, created on first use. */
  public static FakeFabric named(String name) {
    if (name == null || name.isBlank()) {
      throw new IllegalArgumentException("a fabric name must not be blank");
    }
    return NAMED.computeIfAbsent(name, n -> new FakeFabric(n, COPIER, null));
  }

  /**
   * The fabric whose agents live in {@code directory}, shared by every process on this machine that
   * names the same directory: each agent's memory is a memory-mapped file there, peers map each
   * other's files to copy, and notifications travel as small files in the receiver's mailbox. One
   * instance per directory in this JVM.
   *
   * @throws java.io.UncheckedIOException if the directory cannot be created or resolved
   */
  public static FakeFabric sharedDirectory(Path directory) {
    Path canonical = DirectoryMedium.prepare(directory);
    return BY_DIRECTORY.computeIfAbsent(canonical, d -> new FakeFabric("dir:" + d, COPIER, d));
  }

  /**
   * The fabric's name: {@code anonymous} for one created with a constructor, {@code dir:<path>} for
   * a {@link #sharedDirectory} one.
   */
  public String name() {
    return name;
  }

  /**
   * Creates an agent called {@code agentName}: an {@link AgentCore} over this fabric's mechanism
   * ({@code FakeBackend}), which lives on the fabric until it is closed.
   *
   * @throws TransportException if an agent of that name already lives on this fabric
   * @throws IllegalArgumentException if the name is blank or too long (or, for a shared-directory
   *     fabric, not made of letters, digits, {@code .}, {@code _} and {@code -})
   */
  public Transport join(String agentName) {
    checkAgentName(agentName);
    return tryJoin(agentName)
        .orElseThrow(
            () ->
                new TransportException(
                    "agent name '"
                        + agentName
                        + "' is taken on fabric '"
                        + name
                        + "'; close that agent first or use joinUnique"));
  }

  /**
   * Creates an agent named after {@code baseName}: characters a shared-directory fabric cannot use
   * in a file name (and a leading {@code .}) become {@code _}, and {@code -2}, {@code -3}, ... is
   * appended while the name is taken.
   *
   * @throws IllegalArgumentException if the name is blank or too long
   */
  public Transport joinUnique(String baseName) {
    String base = sanitize(baseName);
    for (int n = 1; ; n++) {
      String candidate = n == 1 ? base : base + "-" + n;
      checkAgentName(candidate);
      Optional<Transport> agent = tryJoin(candidate);
      if (agent.isPresent()) {
        return agent.get();
      }
    }
  }

  /** The names of this JVM's agents on this fabric now, sorted. */
  public Set<String> agentNames() {
    return new TreeSet<>(agents.keySet());
  }

  @Override
  public String toString() {
    return "FakeFabric[" + name + ", " + agents.size() + " agents]";
  }

  // ---- what agents ask -----------------------------------------------------------------------

  String identity() {
    return medium.identity();
  }

  FakeMemory allocate(FakeBackend agent, long sizeBytes) {
    if (sizeBytes <= 0 || sizeBytes > Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException(
          "fake memory must be 1 to " + (Integer.MAX_VALUE - 8) + " bytes, got " + sizeBytes);
    }
    return medium.allocate(agent, sizeBytes);
  }

  /** A base address for {@code sizeBytes} of memory, disjoint from every other in this JVM. */
  long reserveAddresses(long sizeBytes) {
    // Pages apart, with a gap, so that no descriptor can run from one region into the next.
    long span = (sizeBytes + PAGE - 1) / PAGE * PAGE + PAGE;
    return nextAddress.getAndAdd(span);
  }

  boolean reachable(String agentName, long instanceId) {
    return medium.reachable(agentName, instanceId);
  }

  boolean locate(AgentMetadata peer, DescriptorList remote, Bytes[] memories, long[] offsets) {
    return medium.locate(peer, remote, memories, offsets);
  }

  /**
   * Starts a posted transfer's copy. A fabric built with its own executor hands every copy to it at
   * once. The others defer the hand-off of a transfer without a notification by {@link
   * #DEFERRED_START}: a caller that polls its status right after posting (as a consumer does) finds
   * the copy unclaimed and runs it itself, on one thread, without waking a pool thread; one that
   * does not poll still sees it completed, after the deferral, by the pool. A transfer with a
   * notification is handed off at once: its peer waits for the notification, not the initiator.
   *
   * @param copy claims the transfer's copy and runs it, unless another thread claimed it first
   */
  void start(Runnable copy, boolean hasNotification) {
    if (!defersStarts || hasNotification) {
      copier.execute(copy);
    } else {
      DEFERRED_STARTS.schedule(
          () -> copier.execute(copy), DEFERRED_START.toNanos(), TimeUnit.NANOSECONDS);
    }
  }

  /** Sends a notification; it vanishes if the incarnation {@code toInstance} is gone. */
  void send(String toAgent, long toInstance, Notification notification) {
    medium.deliver(toAgent, toInstance, notification);
  }

  void collect(FakeBackend agent) {
    medium.collect(agent);
  }

  void leave(FakeBackend agent) {
    if (agents.remove(agent.agentName(), agent)) {
      medium.release(agent);
      for (FakeBackend survivor : agents.values()) {
        survivor.peerLost(
            agent.agentName(), agent.instanceId(), "peer " + agent.agentName() + " closed");
      }
    }
  }

  private Optional<Transport> tryJoin(String agentName) {
    FakeBackend agent = new FakeBackend(this, agentName, medium.newInstanceId());
    if (agents.putIfAbsent(agentName, agent) != null) {
      return Optional.empty();
    }
    boolean claimed = false;
    try {
      claimed = medium.claim(agent);
    } finally {
      if (!claimed) {
        agents.remove(agentName, agent);
      }
    }
    return claimed ? Optional.of(new AgentCore<>(agent)) : Optional.empty();
  }

  private static String sanitize(String baseName) {
    return baseName == null ? null : baseName.replaceAll("[^A-Za-z0-9._-]|^\\.", "_");
  }

  private void checkAgentName(String agentName) {
    if (agentName == null
        || agentName.isBlank()
        || agentName.getBytes(StandardCharsets.UTF_8).length > AgentMetadata.MAX_NAME) {
      throw new IllegalArgumentException(
          "an agent name must be 1 to "
              + AgentMetadata.MAX_NAME
              + " bytes and not blank, got '"
              + agentName
              + "'");
    }
    medium.checkAgentName(agentName);
  }
}
