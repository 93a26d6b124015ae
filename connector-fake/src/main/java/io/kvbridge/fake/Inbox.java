package io.kvbridge.fake;

import io.kvbridge.transfer.Notification;
import java.util.ArrayList;
import java.util.List;

/**
 * The notifications delivered to one agent and not yet drained, in arrival order.
 *
 * <p>Threads: all methods are synchronized.
 */
final class Inbox {

  private final List<Notification> ready = new ArrayList<>();

  synchronized void add(Notification n) {
    ready.add(n);
  }

  /** Returns and removes everything delivered so far, in arrival order. */
  synchronized List<Notification> drain() {
    List<Notification> out = new ArrayList<>(ready);
    ready.clear();
    return out;
  }

  synchronized void clear() {
    ready.clear();
  }
}
