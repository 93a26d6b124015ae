package io.kvbridge.tck.schedule;

import io.kvbridge.lease.EndReason;
import io.kvbridge.lease.LeaseEnd;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * What became of the requests of one simulation, over every start of either engine: how many were
 * routed, served, failed and aborted, why each failed, what P computed for each, how P ended each
 * lease and what D gave back; and the invariants over how the leases ended.
 *
 * <p>Lease ends are recorded from whatever thread P's connector reports them on; everything else on
 * the thread that runs the simulation.
 */
final class RequestLedger {

  private final Map<String, Prompt> computed = new HashMap<>();
  private final Set<String> mustNotBeServed = new HashSet<>();
  private final Set<String> cancelledOnDecoder = new HashSet<>();
  private final Set<String> heldInFull = new HashSet<>();
  private final Set<String> servedRequests = new HashSet<>(); // by every D, dead ones included
  // How each lease ended on P, over every incarnation; filled by P's connectors as leases end.
  private final Map<String, EndReason> leaseEnds = new ConcurrentHashMap<>();
  private final List<String> leasesEndedTwice = new CopyOnWriteArrayList<>();
  private final List<String> failureReasons = new ArrayList<>();
  // Requests D still waited for when its process ended, by every D.
  private final List<String> endedWithDecoder = new ArrayList<>();
  private final List<String> refusedOnProducer = new ArrayList<>();
  // Requests a decoder still held when it shut down gracefully: it releases their leases as it
  // closes, so P may end them RELEASED.
  private final Set<String> closedWithDecoder = new HashSet<>();
  private int requests;
  private int routed;
  private int served;
  private int failed;
  private int aborted;
  private int partlyLocal;
  private int restartsProven;

  /** What P computed for a prompt: the seed of its KV and how many tokens it holds. */
  record Prompt(long seed, int tokens) {}

  int requests() {
    return requests;
  }

  int routed() {
    return routed;
  }

  /** Requests D decoded: loaded and checked, or held in full already. */
  int served() {
    return served;
  }

  int failed() {
    return failed;
  }

  /** Requests D cancelled ({@link Op.AbortOnDecoder}). */
  int aborted() {
    return aborted;
  }

  /** Requests D held every token of, and so read nothing for. */
  int heldInFull() {
    return heldInFull.size();
  }

  /** Requests D held a prefix of, and loaded the rest of. */
  int partlyLocal() {
    return partlyLocal;
  }

  /** Restarts after which the pair served the next forwarded request within one handshake. */
  int restartsProven() {
    return restartsProven;
  }

  /** Why each load that failed or was refused on D did, in the order D learned it. */
  List<String> failureReasons() {
    return List.copyOf(failureReasons);
  }

  String lastFailureReason() {
    return failureReasons.isEmpty() ? "?" : failureReasons.get(failureReasons.size() - 1);
  }

  /** How each lease that ended on P did, by request, over every incarnation of P. */
  Map<String, EndReason> leaseEnds() {
    return Map.copyOf(leaseEnds);
  }

  /** Counts a new request; its id. */
  String newRequest() {
    return "r" + requests++;
  }

  /** The router forwarded a request P finished to D. */
  void recordRouted() {
    routed++;
  }

  /** P computed {@code prompt} for request {@code id}. */
  void recordComputed(String id, Prompt prompt) {
    computed.put(id, prompt);
  }

  /** What P computed for request {@code id}. */
  Prompt prompt(String id) {
    return computed.get(id);
  }

  /** Whatever D is told about these requests, it must never serve them. */
  void recordNeverToBeServed(Collection<String> ids) {
    mustNotBeServed.addAll(ids);
  }

  boolean mustNotBeServed(String id) {
    return mustNotBeServed.contains(id);
  }

  /** D decoded request {@code id} from the KV it loaded and checked. */
  void recordServedFromLoad(String id) {
    servedRequests.add(id);
    served++;
  }

  /** D held every token of request {@code id}, and decoded it without reading anything. */
  void recordServedHeldInFull(String id) {
    heldInFull.add(id);
    served++;
  }

  /** D held a prefix of a request and loads the rest. */
  void recordPartlyLocal() {
    partlyLocal++;
  }

  /** P had no room for request {@code id} and refused it: it ends at once with an error. */
  void recordRefusedOnProducer(String id) {
    refusedOnProducer.add(id);
    failed++;
  }

  /** D's process ended while it still waited for these requests: they failed with it. */
  void recordEndedWithDecoder(Collection<String> ids) {
    endedWithDecoder.addAll(ids);
    failed += ids.size();
  }

  /** A load failed, or D's connector refused it, for {@code reason}. */
  void recordFailure(String reason) {
    failureReasons.add(reason);
    failed++;
  }

  /** D cancelled the load of request {@code id}. */
  void recordCancelledOnDecoder(String id) {
    cancelledOnDecoder.add(id);
    aborted++;
  }

  /** D shut down gracefully while it still waited for these requests, releasing their leases. */
  void recordClosedWithDecoder(Collection<String> ids) {
    closedWithDecoder.addAll(ids);
  }

  void recordRestartProven() {
    restartsProven++;
  }

  /**
   * What became of the requests, for a failed check: how many were routed, served and failed, why,
   * and how P ended their leases.
   */
  @Override
  public String toString() {
    return "routed "
        + routed
        + ", served "
        + served
        + ", failed "
        + failed
        + " (reasons "
        + failureReasons
        + ", waited for when D ended "
        + endedWithDecoder
        + ", refused by P "
        + refusedOnProducer
        + "), leases ended "
        + new TreeMap<>(leaseEnds);
  }

  /** P ended a lease; recorded once per request. */
  void recordLeaseEnd(LeaseEnd end) {
    String id = end.lease().requestId();
    EndReason before = leaseEnds.putIfAbsent(id, end.reason());
    if (before != null) {
      leasesEndedTwice.add(id + " (" + before + ", then " + end.reason() + ")");
    }
  }

  /**
   * Every lease ended once; P ended one RELEASED only if D gave it back (it cancelled the load,
   * held every token, or shut down gracefully while it waited for the load), and never READ one
   * whose every token D held (nothing was read for it). A request D served had its lease end as P
   * acknowledged it: READ, or RELEASED where D held every token; D serves what it read only once P
   * has said its lease held until the read was complete.
   */
  void checkLeaseEnds() {
    if (!leasesEndedTwice.isEmpty()) {
      throw new AssertionError("leases ended twice on P: " + leasesEndedTwice);
    }
    for (String id : servedRequests) {
      EndReason expected = heldInFull.contains(id) ? EndReason.RELEASED : EndReason.READ;
      EndReason ended = leaseEnds.get(id);
      if (ended != expected) {
        throw new AssertionError(
            "D served "
                + id
                + ", but P "
                + (ended == null ? "has not ended its lease" : "ended its lease " + ended)
                + "; an acknowledged lease ends "
                + expected);
      }
    }
    for (Map.Entry<String, EndReason> end : leaseEnds.entrySet()) {
      String id = end.getKey();
      if (end.getValue() == EndReason.RELEASED
          && !cancelledOnDecoder.contains(id)
          && !closedWithDecoder.contains(id)
          && !heldInFull.contains(id)) {
        throw new AssertionError(
            "P ended the lease of "
                + id
                + " RELEASED, but D neither cancelled it, held it, nor closed with it");
      }
      if (end.getValue() == EndReason.READ && heldInFull.contains(id)) {
        throw new AssertionError(
            "P ended the lease of " + id + " READ, but D held every token and read nothing");
      }
    }
  }
}
