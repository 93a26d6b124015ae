package io.kvbridge.tck.faults;

import io.kvbridge.transfer.AgentCore;
import io.kvbridge.transfer.Notification;
import io.kvbridge.transfer.Transport;
import io.kvbridge.transfer.TransportBackend;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;

/**
 * The faults shared by a group of {@link FaultInjectingBackend}s wrapping the backend of any
 * connector's {@link Transport}: lost, held, delayed and duplicated notifications; failed and
 * stalled reads; killed agents.
 *
 * <p>Rules: each arming call adds one rule that fires for at most {@code count} events; when an
 * event matches several rules, the earliest-armed one decides and uses up one of its count.
 * Notification rules apply where a decorated transport drains notifications, to every notification
 * its underlying transport delivered (sent with {@code notify} or attached to a transfer), in
 * arrival order; so they reach only receivers in the group. Read rules apply when a decorated
 * transport posts a READ, before the underlying transport sees it; a read rule may be aimed at the
 * READs one agent posts to another (one rank's link of a tensor-parallel engine), and then reads
 * between other agents neither match it nor use it up.
 *
 * <p>Everything is deterministic: rules fire on the next events in the order they happen, chance
 * draws come from a seeded {@link Random}, and held or stalled things move only when a test
 * releases them.
 *
 * <p>The group also knows what is still moving: {@link #quiet()} says whether every notification
 * sent between live members was drained and every running transfer was seen to end, so a test
 * driving an asynchronous transport can step its engines until nothing is in flight.
 *
 * <p>Threads: safe for use from any thread; one lock guards the whole group's state, and calls into
 * the underlying transports are made outside it.
 */
public final class Faults {

  private final Object lock = new Object();
  private final Random random;
  private final Map<String, FaultInjectingBackend<?, ?>> members = new HashMap<>();
  private final Set<String> killed = new HashSet<>();
  private final List<Rule> notificationRules = new ArrayList<>();
  private final List<Rule> readRules = new ArrayList<>();
  private final List<Held> held = new ArrayList<>();
  private final Map<InFlight, Integer> inFlight = new HashMap<>();
  private long dropped;
  private boolean rulesSuspended;

  /** A group whose chance draws come from {@code new Random(seed)}. */
  public Faults(long seed) {
    this.random = new Random(seed);
  }

  /**
   * Brings {@code transport} into this group: its backend is wrapped in a {@link
   * FaultInjectingBackend} under a new {@link AgentCore}, which owns it from now on. The transport
   * must be an agent core nothing was done with yet, as every connector's provider creates it.
   *
   * @throws IllegalArgumentException if the transport is no agent core, or a live member already
   *     has its agent name
   * @throws IllegalStateException if the transport was used or closed already
   */
  public Transport decorate(Transport transport) {
    if (!(transport instanceof AgentCore<?, ?> core)) {
      throw new IllegalArgumentException(
          "can bring only an AgentCore into a fault group, not "
              + transport
              + "; decorate the transport a connector's provider created, before other decorators");
    }
    return join(core);
  }

  private <L, R> Transport join(AgentCore<L, R> core) {
    String name = core.agentName();
    synchronized (lock) {
      requireFree(name);
    }
    TransportBackend<L, R> backend = core.handOver();
    synchronized (lock) {
      requireFree(name);
      FaultInjectingBackend<L, R> member = new FaultInjectingBackend<>(backend, this, lock);
      members.put(name, member);
      killed.remove(name); // a new process took the name
      return new AgentCore<>(member);
    }
  }

  private void requireFree(String name) {
    if (members.containsKey(name)) {
      throw new IllegalArgumentException(
          "agent '" + name + "' is already in this fault group; close it first");
    }
  }

  // ---- notifications -------------------------------------------------------------------------

  /** The next {@code count} notifications drained in the group vanish. */
  public void dropNextNotifications(int count) {
    addRule(notificationRules, count, new Drop(1.0));
  }

  /**
   * Every notification drained in the group vanishes with probability {@code share} (0 to 1), drawn
   * from the seeded random source, until {@link #clear()}.
   */
  public void dropShareOfNotifications(double share) {
    if (!(share >= 0.0 && share <= 1.0)) {
      throw new IllegalArgumentException("share must be between 0 and 1, got " + share);
    }
    addRule(notificationRules, Integer.MAX_VALUE, new Drop(share));
  }

  /** The next {@code count} notifications are held back until {@link #releaseHeldNotifications}. */
  public void holdNextNotifications(int count) {
    addRule(notificationRules, count, new Hold());
  }

  /** The notifications held and not yet released, in the order they arrived. */
  public List<Notification> heldNotifications() {
    synchronized (lock) {
      return held.stream().map(Held::notification).toList();
    }
  }

  /**
   * Delivers every held notification, in arrival order, at its receiver's next drain if the
   * receiver is still open (others vanish, even when a new member took the receiver's name); no
   * rule applies to them again.
   *
   * @return how many were released
   */
  public int releaseHeldNotifications() {
    synchronized (lock) {
      int count = held.size();
      for (Held h : held) {
        if (members.get(h.receiver().agentName()) == h.receiver()) {
          h.receiver().deliverLater(h.notification());
        }
      }
      held.clear();
      return count;
    }
  }

  /**
   * The next {@code count} notifications reach their receiver late: the drain that would have
   * returned one and the {@code drains - 1} after it do not, the one after does.
   */
  public void delayNextNotifications(int count, int drains) {
    if (drains < 0) {
      throw new IllegalArgumentException("drains must be at least 0, got " + drains);
    }
    addRule(notificationRules, count, new Delay(drains));
  }

  /** The next {@code count} notifications are delivered twice. */
  public void duplicateNextNotifications(int count) {
    addRule(notificationRules, count, new Duplicate());
  }

  /** How many notifications the drop rules removed so far. */
  public long droppedNotifications() {
    synchronized (lock) {
      return dropped;
    }
  }

  // ---- reads ---------------------------------------------------------------------------------

  /**
   * The next {@code count} READs posted in the group fail: their status is {@code Failed(reason)},
   * no byte moves and their notification is never sent.
   */
  public void failNextReads(int count, String reason) {
    addRule(readRules, count, new Fail(Objects.requireNonNull(reason, "reason")));
  }

  /**
   * The next {@code count} READs that {@code poster} posts to {@code remoteAgent} fail, as by
   * {@link #failNextReads}; READs between other agents pass this rule by.
   */
  public void failNextReadsBetween(String poster, String remoteAgent, int count, String reason) {
    addRule(
        readRules,
        count,
        new Fail(Objects.requireNonNull(reason, "reason")),
        new Between(poster, remoteAgent));
  }

  /**
   * The next {@code count} READs posted in the group stay IN_PROGRESS without reaching the
   * underlying transport until {@link #unstallReads()}; releasing one meanwhile cancels it.
   */
  public void stallNextReads(int count) {
    addRule(readRules, count, new Stall());
  }

  /**
   * The next {@code count} READs that {@code poster} posts to {@code remoteAgent} stall, as by
   * {@link #stallNextReads}; READs between other agents pass this rule by.
   */
  public void stallNextReadsBetween(String poster, String remoteAgent, int count) {
    addRule(readRules, count, new Stall(), new Between(poster, remoteAgent));
  }

  /** How many READs are stalled now: neither unstalled, released nor ended with their agent. */
  public int stalledReads() {
    synchronized (lock) {
      int count = 0;
      for (FaultInjectingBackend<?, ?> member : members.values()) {
        count += member.stalled();
      }
      return count;
    }
  }

  /**
   * Posts every stalled read to its underlying transport; one the transport refuses, or whose agent
   * or peer died meanwhile, fails instead.
   *
   * @return how many stalled reads there were
   */
  public int unstallReads() {
    List<FaultInjectingBackend<?, ?>> live;
    synchronized (lock) {
      live = List.copyOf(members.values());
    }
    int count = 0;
    for (FaultInjectingBackend<?, ?> member : live) {
      count += member.resumeStalled();
    }
    return count;
  }

  // ---- agents --------------------------------------------------------------------------------

  /**
   * Kills the member named {@code agentName}, as if its process died: its underlying transport is
   * closed, its held, delayed and stalled things vanish, every later call on it fails, and the
   * other members' notifications to it vanish and their transfers to it fail.
   *
   * @throws IllegalArgumentException if no live member has that name
   */
  public void kill(String agentName) {
    FaultInjectingBackend<?, ?> victim;
    synchronized (lock) {
      victim = members.remove(agentName);
      if (victim == null) {
        throw new IllegalArgumentException(
            "no live agent '" + agentName + "' in this fault group; members: " + memberNames());
      }
      killed.add(agentName);
      held.removeIf(h -> h.receiver().agentName().equals(agentName));
      inFlight.keySet().removeIf(f -> f.from().equals(agentName) || f.to().equals(agentName));
    }
    victim.die();
  }

  /**
   * Sets every armed rule aside until {@link #resumeRules()}: notifications drained and reads
   * posted meanwhile pass untouched and use up no rule. Held notifications stay held and stalled
   * reads stay stalled. For a test that checks what a fault left behind without meeting the next
   * one.
   */
  public void suspendRules() {
    synchronized (lock) {
      rulesSuspended = true;
    }
  }

  /** The rules set aside by {@link #suspendRules()} apply again, with the counts they had left. */
  public void resumeRules() {
    synchronized (lock) {
      rulesSuspended = false;
    }
  }

  /** Disarms every rule. Held notifications stay held and stalled reads stay stalled. */
  public void clear() {
    synchronized (lock) {
      notificationRules.clear();
      readRules.clear();
    }
  }

  /**
   * Whether nothing is moving between live members: every notification one sent to another was
   * drained, every released notification was handed out, and every transfer that reached an
   * underlying transport was seen (through {@code status}) to end or was released. Held, delayed
   * and stalled things do not count: they move only when a test lets them.
   */
  public boolean quiet() {
    return quietExceptTowards(null);
  }

  /**
   * Like {@link #quiet()}, except that notifications on their way to {@code stoppedAgent} do not
   * count: for a test that stopped that member's process, so that what is sent to it waits until it
   * drains again.
   */
  public boolean quietExceptTowards(String stoppedAgent) {
    synchronized (lock) {
      for (Map.Entry<InFlight, Integer> e : inFlight.entrySet()) {
        if (e.getValue() > 0 && !e.getKey().to().equals(stoppedAgent)) {
          return false;
        }
      }
      for (FaultInjectingBackend<?, ?> member : members.values()) {
        if (member.busy()) {
          return false;
        }
      }
      return true;
    }
  }

  // ---- what the members ask, under the lock --------------------------------------------------

  boolean isDead(String agentName) {
    return killed.contains(agentName);
  }

  /** The live member named {@code agentName}, if any. */
  FaultInjectingBackend<?, ?> member(String agentName) {
    return members.get(agentName);
  }

  void left(FaultInjectingBackend<?, ?> member) {
    if (members.remove(member.agentName(), member)) {
      // A closed agent drains nothing more, and sends nothing more.
      String name = member.agentName();
      inFlight.keySet().removeIf(f -> f.from().equals(name) || f.to().equals(name));
    }
  }

  NotificationAction decideNotification() {
    Object action = rulesSuspended ? null : pick(notificationRules, null, null);
    if (action instanceof Drop drop
        && !(drop.share() >= 1.0 || random.nextDouble() < drop.share())) {
      return null;
    }
    if (action instanceof Drop) {
      dropped++;
    }
    return (NotificationAction) action;
  }

  void hold(FaultInjectingBackend<?, ?> receiver, Notification notification) {
    held.add(new Held(receiver, notification));
  }

  /** What happens to a READ {@code poster} posts to {@code remoteAgent}. */
  ReadAction decideRead(String poster, String remoteAgent) {
    return rulesSuspended ? null : (ReadAction) pick(readRules, poster, remoteAgent);
  }

  /**
   * A notification from {@code from} to the member {@code to} is on its way (now, or once sent);
   * returns whether it is counted, which it is only between live members. {@code to} is the member
   * whose metadata the sender loaded: once it left, a new member under its name does not receive
   * what is sent to it.
   */
  boolean sent(String from, FaultInjectingBackend<?, ?> to, byte[] payload) {
    if (to != null && members.get(to.agentName()) == to && members.containsKey(from)) {
      InFlight key = new InFlight(from, to.agentName(), ByteBuffer.wrap(payload.clone()));
      inFlight.merge(key, 1, Integer::sum);
      return true;
    }
    return false;
  }

  /** A notification reached its receiver's underlying drain (perhaps before it was counted). */
  void arrived(String to, Notification n) {
    inFlight.merge(new InFlight(n.fromAgent(), to, ByteBuffer.wrap(n.payload())), -1, Integer::sum);
    inFlight.values().remove(0);
  }

  /**
   * The action of the earliest-armed rule that matches an event between {@code from} and {@code to}
   * (a notification's are not told apart: every notification rule matches), using up one of its
   * count; or null.
   */
  private static Object pick(List<Rule> rules, String from, String to) {
    for (int i = 0; i < rules.size(); i++) {
      Rule rule = rules.get(i);
      if (rule.between != null && !rule.between.matches(from, to)) {
        continue;
      }
      if (rule.remaining < Integer.MAX_VALUE) {
        rule.remaining--;
      }
      if (rule.remaining == 0) {
        rules.remove(i);
      }
      return rule.action;
    }
    return null;
  }

  private void addRule(List<Rule> rules, int count, Object action) {
    addRule(rules, count, action, null);
  }

  private void addRule(List<Rule> rules, int count, Object action, Between between) {
    if (count < 1) {
      throw new IllegalArgumentException("count must be at least 1, got " + count);
    }
    synchronized (lock) {
      rules.add(new Rule(count, action, between));
    }
  }

  private Set<String> memberNames() {
    return new TreeSet<>(members.keySet());
  }

  /** What happens to a drained notification. */
  sealed interface NotificationAction {}

  record Drop(double share) implements NotificationAction {}

  record Hold() implements NotificationAction {}

  record Delay(int drains) implements NotificationAction {}

  record Duplicate() implements NotificationAction {}

  /** What happens to a posted READ. */
  sealed interface ReadAction {}

  record Fail(String reason) implements ReadAction {}

  record Stall() implements ReadAction {}

  private record Held(FaultInjectingBackend<?, ?> receiver, Notification notification) {}

  /** The READs one agent posts to another: what an aimed read rule matches. */
  private record Between(String poster, String remoteAgent) {
    Between {
      Objects.requireNonNull(poster, "poster");
      Objects.requireNonNull(remoteAgent, "remoteAgent");
    }

    boolean matches(String from, String to) {
      return poster.equals(from) && remoteAgent.equals(to);
    }
  }

  private record InFlight(String from, String to, ByteBuffer payload) {}

  private static final class Rule {
    private int remaining;
    private final Object action;
    private final Between between; // null: every event matches

    Rule(int remaining, Object action, Between between) {
      this.remaining = remaining;
      this.action = action;
      this.between = between;
    }
  }
}
