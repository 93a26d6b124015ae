package io.kvbridge.fake;

import io.kvbridge.transfer.TransportException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The in-JVM "network" fake agents live on: it knows the agents by name, hands out non-overlapping
 * synthetic addresses for their memory, carries their notifications, runs their copies on an
 * executor, and injects the {@link FakeFaults} a test arms.
 *
 * <p>Agents reach each other only within one fabric. {@link #shared()} is the one the {@code fake}
 * connector uses by default; {@link #named(String)} gives tests (and the {@code fake.fabric}
 * property) a fabric of their own; {@code new FakeFabric()} an anonymous one.
 *
 * <p>Threads: safe for use from any thread.
 */
public final class FakeFabric {

  /** The name of the {@link #shared()} fabric. */
  public static final String DEFAULT_NAME = "default";

  /** The seed of the random source of fabrics created without one. */
  public static final long DEFAULT_SEED = 0x6B76_6272L;

  private static final Map<String, FakeFabric> NAMED = new ConcurrentHashMap<>();
  private static final AtomicLong SERIAL = new AtomicLong();
  private static final ExecutorService COPIER =
      Executors.newCachedThreadPool(
          r -> {
            Thread t = new Thread(r, "kvbridge-fake-copy");
            t.setDaemon(true);
            return t;
          });

  private static final long FIRST_ADDRESS = 0x10_0000_0000L;
  private static final long PAGE = 4096;

  private final String name;
  private final String identity;
  private final Executor copier;
  private final FakeFaults faults;
  private final Map<String, FakeTransport> agents = new ConcurrentHashMap<>();
  private final AtomicLong nextAddress = new AtomicLong(FIRST_ADDRESS);
  private final AtomicLong nextInstance = new AtomicLong(1);

  /** An anonymous fabric with the default seed, copying on a shared pool of daemon threads. */
  public FakeFabric() {
    this(DEFAULT_SEED);
  }

  /** An anonymous fabric whose chance-based faults draw from {@code seed}. */
  public FakeFabric(long seed) {
    this(seed, COPIER);
  }

  /**
   * An anonymous fabric that runs copies on {@code copyExecutor}: {@code Runnable::run} completes
   * every transfer inside {@code post}, before it returns.
   */
  public FakeFabric(long seed, Executor copyExecutor) {
    this("anonymous", seed, copyExecutor);
  }

  private FakeFabric(String name, long seed, Executor copier) {
    this.name = name;
    this.identity =
        "jvm:" + ProcessHandle.current().pid() + "/" + SERIAL.incrementAndGet() + "/" + name;
    this.copier = Objects.requireNonNull(copier, "copyExecutor");
    this.faults = new FakeFaults(this, seed);
  }

  /** The fabric the {@code fake} connector uses unless told otherwise. */
  public static FakeFabric shared() {
    return named(DEFAULT_NAME);
  }

  /** The fabric called {@code name} in this JVM, created with the default seed on first use. */
  public static FakeFabric named(String name) {
    if (name == null || name.isBlank()) {
      throw new IllegalArgumentException("a fabric name must not be blank");
    }
    return NAMED.computeIfAbsent(name, n -> new FakeFabric(n, DEFAULT_SEED, COPIER));
  }

  /** The fabric's name ({@code anonymous} for one created with a constructor). */
  public String name() {
    return name;
  }

  /** The faults this fabric injects. */
  public FakeFaults faults() {
    return faults;
  }

  /**
   * Creates an agent called {@code agentName}.
   *
   * @throws TransportException if an agent of that name already lives on this fabric
   */
  public FakeTransport join(String agentName) {
    checkAgentName(agentName);
    FakeTransport agent = new FakeTransport(this, agentName, nextInstance.getAndIncrement());
    if (agents.putIfAbsent(agentName, agent) != null) {
      throw new TransportException(
          "agent name '"
              + agentName
              + "' is taken on fabric '"
              + name
              + "'; close that agent first or use joinUnique");
    }
    return agent;
  }

  /**
   * Creates an agent called {@code baseName}, or {@code baseName-2}, {@code baseName-3}, ... if
   * that name is taken.
   */
  public FakeTransport joinUnique(String baseName) {
    checkAgentName(baseName);
    for (int n = 1; ; n++) {
      String candidate = n == 1 ? baseName : baseName + "-" + n;
      FakeTransport agent = new FakeTransport(this, candidate, nextInstance.getAndIncrement());
      if (agents.putIfAbsent(candidate, agent) == null) {
        return agent;
      }
    }
  }

  /** The names of the agents on this fabric now, sorted. */
  public Set<String> agentNames() {
    return new TreeSet<>(agents.keySet());
  }

  @Override
  public String toString() {
    return "FakeFabric[" + name + ", " + agents.size() + " agents]";
  }

  // ---- what agents ask -----------------------------------------------------------------------

  String identity() {
    return identity;
  }

  FakeMemory allocate(long sizeBytes) {
    if (sizeBytes <= 0 || sizeBytes > Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException(
          "fake memory must be 1 to " + (Integer.MAX_VALUE - 8) + " bytes, got " + sizeBytes);
    }
    // Pages apart, with a gap, so that no descriptor can run from one region into the next.
    long span = (sizeBytes + PAGE - 1) / PAGE * PAGE + PAGE;
    long address = nextAddress.getAndAdd(span);
    return new FakeMemory(this, address, ByteBuffer.allocate((int) sizeBytes), "", () -> {});
  }

  /** The live agent called {@code agentName}, if it is the incarnation {@code instanceId}. */
  Optional<FakeTransport> agent(String agentName, long instanceId) {
    FakeTransport agent = agents.get(agentName);
    return agent != null && agent.instanceId() == instanceId
        ? Optional.of(agent)
        : Optional.empty();
  }

  void execute(Runnable copy) {
    copier.execute(copy);
  }

  /** Sends a notification through the fault rules. */
  void send(String fromAgent, String toAgent, long toInstance, byte[] payload) {
    InFlightNotification n = new InFlightNotification(fromAgent, toAgent, payload);
    FakeFaults.NotificationFate fate = faults.decide(n, toInstance);
    for (int i = 0; i < fate.copies(); i++) {
      deliver(n, toInstance, fate.withheldDrains());
    }
  }

  /** Puts a notification in its receiver's inbox; it vanishes if the receiver is gone. */
  void deliver(InFlightNotification n, long toInstance, int withheldDrains) {
    agent(n.toAgent(), toInstance).ifPresent(r -> r.receive(n, withheldDrains));
  }

  void leave(FakeTransport agent) {
    agents.remove(agent.agentName(), agent);
  }

  void kill(String agentName) {
    FakeTransport victim = agents.remove(agentName);
    if (victim == null) {
      throw new IllegalArgumentException(
          "no agent '" + agentName + "' on fabric '" + name + "'; agents: " + agentNames());
    }
    victim.killed();
    for (FakeTransport survivor : agents.values()) {
      survivor.peerLost(agentName, victim.instanceId(), "peer " + agentName + " was killed");
    }
  }

  private static void checkAgentName(String agentName) {
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
  }
}
