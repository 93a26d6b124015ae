package io.kvbridge.fake;

import io.kvbridge.transfer.DescriptorList;
import io.kvbridge.transfer.Notification;

/**
 * What carries a fabric's memory and notifications between agents: the JVM's heap ({@link
 * JvmMedium}) or a directory shared by processes on one machine ({@link DirectoryMedium}).
 *
 * <p>Threads: implementations are safe for concurrent use.
 */
interface Medium {

  /** Identifies the fabric in metadata blobs; agents load only blobs of their own fabric. */
  String identity();

  /** A fresh incarnation id, distinct from every other agent's on this medium. */
  long newInstanceId();

  /**
   * Refuses names this medium cannot carry.
   *
   * @throws IllegalArgumentException naming the rule
   */
  void checkAgentName(String agentName);

  /** Memory for {@code agent}. */
  FakeMemory allocate(FakeBackend agent, long sizeBytes);

  /**
   * Makes {@code agent} reachable by its name, unless another live agent holds the name.
   *
   * @return false if the name is taken
   * @throws io.kvbridge.transfer.TransportException if the medium cannot hold the agent
   */
  boolean claim(FakeBackend agent);

  /** Makes {@code agent} unreachable; its name becomes free. */
  void release(FakeBackend agent);

  /** Whether the incarnation {@code instanceId} of {@code agentName} is alive. */
  boolean reachable(String agentName, long instanceId);

  /**
   * Where the pieces of {@code remote} lie in {@code peer}'s memory: piece {@code i} in {@code
   * memories[i]} at {@code offsets[i]}. Returns false if the peer no longer has some of it
   * registered (the arrays are then partly filled). The caller checked {@code remote} against
   * {@code peer}'s metadata.
   */
  boolean locate(AgentMetadata peer, DescriptorList remote, Bytes[] memories, long[] offsets);

  /** Hands a notification to the incarnation {@code toInstance} of {@code toAgent}, or drops it. */
  void deliver(String toAgent, long toInstance, Notification notification);

  /** Moves what arrived for {@code agent} into its inbox. */
  void collect(FakeBackend agent);
}
