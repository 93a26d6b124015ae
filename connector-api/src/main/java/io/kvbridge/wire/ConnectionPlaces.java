package io.kvbridge.wire;

import io.kvbridge.net.DropReason;
import java.net.InetAddress;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Who gets a place on a {@link TcpHandshakeServer}: the connections open per remote address and in
 * all, the places kept for addresses served before, and which connection makes room when a cap is
 * reached (the oldest that proved nothing and waits on its peer). Also keeps the connections that
 * have not proved themselves in accept order, which is proof-deadline order.
 *
 * <p>Threads: confined to the server's I/O thread.
 */
final class ConnectionPlaces {

  private static final int KNOWN_ADDRESSES = 4096;

  private final TcpHandshakeChannel.Limits limits;
  private final ArrayDeque<ServerConnection> unproven = new ArrayDeque<>();
  private final Map<InetAddress, Peer> byAddress = new HashMap<>();
  private final Map<InetAddress, Boolean> known =
      new LinkedHashMap<>(16, 0.75f, true) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<InetAddress, Boolean> eldest) {
          return size() > KNOWN_ADDRESSES;
        }
      };
  private int open;
  private int openUnknown;

  ConnectionPlaces(TcpHandshakeChannel.Limits limits) {
    this.limits = limits;
  }

  /** What admitting a connection from an address takes. */
  sealed interface Admission {
    /** Admit it, after closing these connections to make room. */
    record Admit(List<ServerConnection> evict) implements Admission {}

    /** Refuse it: this cap is reached and nothing can make room. */
    record Refuse(DropReason cap) implements Admission {}
  }

  /** Whether {@code peer} was served before (among the most recent few thousand addresses). */
  boolean isKnown(InetAddress peer) {
    return known.containsKey(peer);
  }

  /** {@code peer}'s conversation ended accepted: it is kept a place from now on. */
  void served(InetAddress peer) {
    known.put(peer, Boolean.TRUE);
  }

  /**
   * What it takes to admit a new connection from {@code peer} under every cap: the connections to
   * evict (none, or the oldest that proved nothing where a cap is reached), or the cap that cannot
   * be met, in which case nothing is to be evicted.
   */
  Admission admission(InetAddress peer) {
    Peer mine = byAddress.get(peer);
    ServerConnection forAddress = null;
    if (mine != null && mine.open >= limits.perAddress()) {
      forAddress = mine.oldestEvictable();
      if (forAddress == null) {
        return new Admission.Refuse(DropReason.ADDRESS_LIMIT);
      }
    }
    int unknownCap = limits.total() - limits.reservedForKnown();
    boolean overTotal = open - (forAddress == null ? 0 : 1) >= limits.total();
    boolean overUnknown =
        !isKnown(peer)
            && openUnknown - (forAddress == null || forAddress.known ? 0 : 1) >= unknownCap;
    if (!overTotal && !overUnknown) {
      return new Admission.Admit(forAddress == null ? List.of() : List.of(forAddress));
    }
    ServerConnection forTotal = oldestEvictable(overUnknown ? Boolean.FALSE : null, forAddress);
    if (forTotal == null) {
      return new Admission.Refuse(DropReason.TOTAL_LIMIT);
    }
    return new Admission.Admit(
        forAddress == null ? List.of(forTotal) : List.of(forAddress, forTotal));
  }

  /** A connection was admitted. */
  void opened(ServerConnection c) {
    open++;
    if (!c.known) {
      openUnknown++;
    }
    byAddress.computeIfAbsent(c.peer, p -> new Peer()).add(c);
    unproven.addLast(c);
  }

  /** A connection closed; call once per connection. */
  void closed(ServerConnection c) {
    open--;
    if (!c.known) {
      openUnknown--;
    }
    Peer peer = byAddress.get(c.peer);
    if (peer != null && peer.closed() == 0) {
      byAddress.remove(c.peer);
    }
  }

  /**
   * The oldest connection that has not proved itself and is still open, if any; the ones that
   * proved themselves or closed meanwhile are forgotten on the way.
   */
  Optional<ServerConnection> oldestUnproven() {
    while (!unproven.isEmpty() && (unproven.peekFirst().closed || unproven.peekFirst().proven)) {
      unproven.pollFirst();
    }
    return Optional.ofNullable(unproven.peekFirst());
  }

  /** Forgets the oldest unproven connection, which {@link #oldestUnproven()} just gave. */
  void forgetOldestUnproven() {
    unproven.pollFirst();
  }

  /**
   * The oldest connection that may be evicted, other than {@code besides}; of unknown addresses
   * only when {@code knownWanted} is false, of any when it is null.
   */
  private ServerConnection oldestEvictable(Boolean knownWanted, ServerConnection besides) {
    oldestUnproven();
    for (ServerConnection c : unproven) {
      if (c != besides
          && c.evictable()
          && (knownWanted == null || c.known == knownWanted.booleanValue())) {
        return c;
      }
    }
    return null;
  }

  /** The open connections of one remote address, in accept order. */
  private static final class Peer {
    final ArrayDeque<ServerConnection> connections = new ArrayDeque<>();
    int open;

    void add(ServerConnection c) {
      connections.addLast(c);
      open++;
    }

    /** One of its connections closed; returns how many stay open. */
    int closed() {
      open--;
      while (!connections.isEmpty() && connections.peekFirst().closed) {
        connections.pollFirst();
      }
      return open;
    }

    ServerConnection oldestEvictable() {
      for (ServerConnection c : connections) {
        if (c.evictable()) {
          return c;
        }
      }
      return null;
    }
  }
}
