package io.kvbridge.fake;

import io.kvbridge.transfer.DescriptorList;
import io.kvbridge.transfer.Notification;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Agents in one JVM: memory on the heap, peers reached directly, notifications put straight into
 * the receiver's inbox.
 */
final class JvmMedium implements Medium {

  private static final AtomicLong SERIAL = new AtomicLong();

  private final FakeFabric fabric;
  private final String identity;
  private final Map<String, FakeBackend> agents = new ConcurrentHashMap<>();
  private final AtomicLong nextInstance = new AtomicLong(1);

  JvmMedium(FakeFabric fabric, String name) {
    this.fabric = fabric;
    this.identity =
        "jvm:" + ProcessHandle.current().pid() + "/" + SERIAL.incrementAndGet() + "/" + name;
  }

  @Override
  public String identity() {
    return identity;
  }

  @Override
  public long newInstanceId() {
    return nextInstance.getAndIncrement();
  }

  @Override
  public void checkAgentName(String agentName) {
    // Any name will do in memory.
  }

  @Override
  public FakeMemory allocate(FakeBackend agent, long sizeBytes) {
    long address = fabric.reserveAddresses(sizeBytes);
    return new FakeMemory(fabric, address, ByteBuffer.allocate((int) sizeBytes), "", () -> {});
  }

  @Override
  public boolean claim(FakeBackend agent) {
    return agents.putIfAbsent(agent.agentName(), agent) == null;
  }

  @Override
  public void release(FakeBackend agent) {
    agents.remove(agent.agentName(), agent);
  }

  @Override
  public boolean reachable(String agentName, long instanceId) {
    return live(agentName, instanceId).isPresent();
  }

  @Override
  public boolean locate(
      AgentMetadata peer, DescriptorList remote, Bytes[] memories, long[] offsets) {
    FakeBackend agent = agents.get(peer.agentName());
    return agent != null
        && agent.instanceId() == peer.instanceId()
        && agent.locateForPeer(remote, memories, offsets);
  }

  @Override
  public void deliver(String toAgent, long toInstance, Notification notification) {
    live(toAgent, toInstance).ifPresent(r -> r.receive(notification));
  }

  @Override
  public void collect(FakeBackend agent) {
    // Delivery already put everything into the inbox.
  }

  private Optional<FakeBackend> live(String agentName, long instanceId) {
    FakeBackend agent = agents.get(agentName);
    return agent != null && agent.instanceId() == instanceId
        ? Optional.of(agent)
        : Optional.empty();
  }
}
