package io.kvbridge.fake;

import io.kvbridge.transfer.Notification;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * The notifications delivered to one in-JVM agent and not yet drained, plus those a delay fault
 * withholds for a number of drains.
 *
 * <p>Threads: all methods are synchronized.
 */
final class Inbox {

  private final List<Notification> ready = new ArrayList<>();
  private final List<Withheld> withheld = new ArrayList<>();

  /** Adds a notification that the next {@code withheldDrains} drains must not return. */
  synchronized void add(Notification n, int withheldDrains) {
    if (withheldDrains <= 0) {
      ready.add(n);
    } else {
      withheld.add(new Withheld(n, withheldDrains));
    }
  }

  /** Returns and removes what is due, in arrival order; counts down the withheld ones. */
  synchronized List<Notification> drain() {
    List<Notification> out = new ArrayList<>(ready);
    ready.clear();
    for (Iterator<Withheld> it = withheld.iterator(); it.hasNext(); ) {
      Withheld w = it.next();
      if (w.drainsLeft == 0) {
        out.add(w.notification);
        it.remove();
      } else {
        w.drainsLeft--;
      }
    }
    return out;
  }

  synchronized void clear() {
    ready.clear();
    withheld.clear();
  }

  private static final class Withheld {
    private final Notification notification;
    private int drainsLeft;

    Withheld(Notification notification, int drainsLeft) {
      this.notification = notification;
      this.drainsLeft = drainsLeft;
    }
  }
}
