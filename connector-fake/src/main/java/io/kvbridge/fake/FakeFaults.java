package io.kvbridge.fake;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.Random;
import java.util.function.Predicate;

/**
 * The faults a {@link FakeFabric} injects, armed by tests: lost, held, delayed and duplicated
 * notifications; failed and stalled transfers; killed agents. Everything is deterministic: rules
 * fire on the next matching events in the order they happen, chance draws come from the fabric's
 * seeded {@link Random}, and held or stalled things move only when a test releases them.
 *
 * <p>Rules: each arming call adds one rule that fires for at most {@code count} matching events
 * ({@link #UNLIMITED} for all of them, until {@link #clear()}). When an event matches several
 * rules, the earliest-armed one decides and uses up one of its count. An event no rule matches
 * passes normally.
 *
 * <p>Notification rules apply to every notification crossing the fabric, whether sent with {@code
 * notify} or attached to a finished transfer. Transfer rules apply when a transfer is posted, after
 * it passed every check (pairing, bounds, peer known), so they hit only transfers that would
 * otherwise have run.
 *
 * <p>Threads: safe for use from any thread; predicates run under this object's lock and must be
 * quick and side-effect free.
 */
public final class FakeFaults {

  /** A count that never runs out. */
  public static final int UNLIMITED = Integer.MAX_VALUE;

  private final FakeFabric fabric;
  private final Random random;
  private final Object lock = new Object();
  private final List<Rule<InFlightNotification, NotificationAction>> notificationRules =
      new ArrayList<>();
  private final List<Rule<TransferAttempt, TransferAction>> transferRules = new ArrayList<>();
  private final List<Pending> held = new ArrayList<>();
  private final List<Stallable> stalled = new ArrayList<>();
  private long dropped;

  FakeFaults(FakeFabric fabric, long seed) {
    this.fabric = fabric;
    this.random = new Random(seed);
  }

  // ---- notifications -------------------------------------------------------------------------

  /** The next {@code count} notifications matching {@code which} vanish. */
  public void dropNotifications(int count, Predicate<InFlightNotification> which) {
    addNotificationRule(count, which, new Drop(1.0));
  }

  /** The next {@code count} notifications, whoever sends them, vanish. */
  public void dropNextNotifications(int count) {
    dropNotifications(count, InFlightNotification.any());
  }

  /**
   * Every notification matching {@code which} vanishes with probability {@code share} (0 to 1),
   * drawn from the fabric's seeded random source, until {@link #clear()}.
   */
  public void dropShareOfNotifications(double share, Predicate<InFlightNotification> which) {
    if (!(share >= 0.0 && share <= 1.0)) {
      throw new IllegalArgumentException("share must be between 0 and 1, got " + share);
    }
    addNotificationRule(UNLIMITED, which, new Drop(share));
  }

  /**
   * The next {@code count} notifications matching {@code which} are held back until {@link
   * #releaseHeldNotifications()}.
   */
  public void holdNotifications(int count, Predicate<InFlightNotification> which) {
    addNotificationRule(count, which, new Hold());
  }

  /** The notifications held so far and not yet released, in the order they were sent. */
  public List<InFlightNotification> heldNotifications() {
    synchronized (lock) {
      return held.stream().map(Pending::notification).toList();
    }
  }

  /**
   * Delivers every held notification, in the order they were sent, to receivers still on the fabric
   * (others vanish); no rule applies to them again.
   *
   * @return how many were released
   */
  public int releaseHeldNotifications() {
    List<Pending> released;
    synchronized (lock) {
      released = List.copyOf(held);
      held.clear();
    }
    for (Pending p : released) {
      fabric.deliver(p.notification(), p.toInstance(), 0);
    }
    return released.size();
  }

  /**
   * The next {@code count} notifications matching {@code which} reach their receiver late: its next
   * {@code drains} calls to {@code drainNotifications()} do not return them, the one after does.
   */
  public void delayNotifications(int count, Predicate<InFlightNotification> which, int drains) {
    if (drains < 0) {
      throw new IllegalArgumentException("drains must be at least 0, got " + drains);
    }
    addNotificationRule(count, which, new Delay(drains));
  }

  /** The next {@code count} notifications matching {@code which} are delivered twice. */
  public void duplicateNotifications(int count, Predicate<InFlightNotification> which) {
    addNotificationRule(count, which, new Duplicate());
  }

  /** How many notifications the drop rules removed so far. */
  public long droppedNotifications() {
    synchronized (lock) {
      return dropped;
    }
  }

  // ---- transfers -----------------------------------------------------------------------------

  /**
   * The next {@code count} transfers matching {@code which} fail: their status becomes {@code
   * Failed(reason)} and no byte moves.
   */
  public void failTransfers(int count, Predicate<TransferAttempt> which, String reason) {
    Objects.requireNonNull(reason, "reason");
    addTransferRule(count, which, new Fail(reason));
  }

  /** The next {@code count} READs, by any agent, fail with {@code reason}. */
  public void failNextReads(int count, String reason) {
    failTransfers(count, TransferAttempt.reads(), reason);
  }

  /**
   * The next {@code count} transfers matching {@code which} stay IN_PROGRESS, moving no byte, until
   * {@link #unstallTransfers()}; releasing one meanwhile cancels it for good.
   */
  public void stallTransfers(int count, Predicate<TransferAttempt> which) {
    addTransferRule(count, which, new Stall());
  }

  /** The next {@code count} READs, by any agent, stall. */
  public void stallNextReads(int count) {
    stallTransfers(count, TransferAttempt.reads());
  }

  /** How many transfers are stalled now (stalled, and neither released nor failed since). */
  public int stalledTransfers() {
    synchronized (lock) {
      stalled.removeIf(s -> !s.isStalled());
      return stalled.size();
    }
  }

  /**
   * Lets every stalled transfer run; one whose agent or peer has gone meanwhile fails instead.
   *
   * @return how many were let go
   */
  public int unstallTransfers() {
    List<Stallable> resumed;
    synchronized (lock) {
      resumed = List.copyOf(stalled);
      stalled.clear();
    }
    int count = 0;
    for (Stallable s : resumed) {
      if (s.resume()) {
        count++;
      }
    }
    return count;
  }

  // ---- agents --------------------------------------------------------------------------------

  /**
   * Kills the agent named {@code agentName}, as if its process died: it disappears from the fabric
   * (its name becomes free), its transfers and every transfer to or from it fail, notifications to
   * it vanish, and it can no longer post or be heard.
   *
   * @throws IllegalArgumentException if no agent of that name lives on the fabric in this JVM
   */
  public void kill(String agentName) {
    fabric.kill(agentName);
  }

  /** Disarms every rule. Held notifications stay held and stalled transfers stay stalled. */
  public void clear() {
    synchronized (lock) {
      notificationRules.clear();
      transferRules.clear();
    }
  }

  // ---- what the fabric asks ------------------------------------------------------------------

  /** Decides the fate of a notification; a held one is kept here. */
  NotificationFate decide(InFlightNotification n, long toInstance) {
    synchronized (lock) {
      NotificationAction action = pick(notificationRules, n);
      if (action instanceof Drop drop) {
        if (drop.share() >= 1.0 || random.nextDouble() < drop.share()) {
          dropped++;
          return new NotificationFate(0, 0);
        }
      } else if (action instanceof Hold) {
        held.add(new Pending(n, toInstance));
        return new NotificationFate(0, 0);
      } else if (action instanceof Delay delay) {
        return new NotificationFate(1, delay.drains());
      } else if (action instanceof Duplicate) {
        return new NotificationFate(2, 0);
      }
      return new NotificationFate(1, 0);
    }
  }

  /** Decides the fate of a transfer that passed its checks. */
  TransferAction decide(TransferAttempt attempt) {
    synchronized (lock) {
      TransferAction action = pick(transferRules, attempt);
      return action == null ? new Proceed() : action;
    }
  }

  /** Remembers a transfer the {@link Stall} decision stalled, for {@link #unstallTransfers()}. */
  void stalled(Stallable transfer) {
    synchronized (lock) {
      stalled.add(transfer);
    }
  }

  private static <E, A> A pick(List<Rule<E, A>> rules, E event) {
    for (Iterator<Rule<E, A>> it = rules.iterator(); it.hasNext(); ) {
      Rule<E, A> rule = it.next();
      if (rule.which.test(event)) {
        if (rule.remaining < UNLIMITED) {
          rule.remaining--;
        }
        if (rule.remaining == 0) {
          it.remove();
        }
        return rule.action;
      }
    }
    return null;
  }

  private void addNotificationRule(
      int count, Predicate<InFlightNotification> which, NotificationAction action) {
    requirePositive(count);
    synchronized (lock) {
      notificationRules.add(new Rule<>(count, which, action));
    }
  }

  private void addTransferRule(int count, Predicate<TransferAttempt> which, TransferAction action) {
    requirePositive(count);
    synchronized (lock) {
      transferRules.add(new Rule<>(count, which, action));
    }
  }

  private static void requirePositive(int count) {
    if (count < 1) {
      throw new IllegalArgumentException(
          "count must be at least 1 (or FakeFaults.UNLIMITED), got " + count);
    }
  }

  /** How a notification travels: how many copies, withheld from how many drains. */
  record NotificationFate(int copies, int withheldDrains) {}

  /** What happens to a posted transfer. */
  sealed interface TransferAction {}

  /** The transfer runs normally. */
  record Proceed() implements TransferAction {}

  /** The transfer fails at once with this reason. */
  record Fail(String reason) implements TransferAction {}

  /** The transfer waits for {@link #unstallTransfers()}. */
  record Stall() implements TransferAction {}

  /** A stalled transfer as the faults see it. */
  interface Stallable {
    /** Whether it is still waiting. */
    boolean isStalled();

    /** Lets it run; false if it was no longer stalled. */
    boolean resume();
  }

  private sealed interface NotificationAction {}

  private record Drop(double share) implements NotificationAction {}

  private record Hold() implements NotificationAction {}

  private record Delay(int drains) implements NotificationAction {}

  private record Duplicate() implements NotificationAction {}

  private record Pending(InFlightNotification notification, long toInstance) {}

  /** Fires {@code action} for the next {@code remaining} events that {@code which} matches. */
  private static final class Rule<E, A> {
    private int remaining;
    private final Predicate<E> which;
    private final A action;

    Rule(int remaining, Predicate<E> which, A action) {
      this.remaining = remaining;
      this.which = Objects.requireNonNull(which, "which");
      this.action = action;
    }
  }
}
