package io.kvbridge.lease;

import io.kvbridge.time.MonotonicClock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * P's live leases, indexed by request id and by deadline.
 *
 * <p><b>Complexity.</b> Grant, acknowledge, renew and revoke are O(log n) in the number of live
 * leases: a hash map finds the lease and a binary heap ordered by (deadline, grant sequence), whose
 * entries know their slot, keeps expiry order even when renewals reorder deadlines. {@link
 * #expire()} is O(k log n) for k expired leases and O(1) when none is due: it only looks at the
 * head of the heap, never at every live lease. {@link #soonestDeadline()} is O(1). The recently
 * ended ids are a bounded ring with a hash index.
 *
 * <p><b>Allocation.</b> {@link #renewDeadline} and {@link #acknowledge} allocate nothing: no index
 * entry, no set of acknowledging consumers, no message text, no outcome object (a renewal's outcome
 * is coded in a {@code long}, an acknowledgement's is one made once) and no snapshot for the
 * listener, which sees the table's record through a view valid during its call ({@link
 * LeaseListener}); only a listener that asks for snapshots is handed them. {@link #renew} and
 * {@link #confirm} make a {@link RenewOutcome.Renewed} for the new deadline. Ends that a method
 * returns ({@link #release}, {@link #revoke}, {@link #expire}, an acknowledgement past the
 * deadline) are snapshots.
 *
 * <p><b>Confirmations.</b> A lease remembers what each consumer confirmed it reads (read digest and
 * skipped tokens) and whether that read was acknowledged, for at most {@code acksRequired}
 * consumers: O(1) memory per lease, made at its first confirmation, not at the grant. An
 * acknowledgement compares with what its consumer confirmed without allocating.
 *
 * <p><b>Exactly once.</b> A lease leaves both indexes in the same critical section that produces
 * its {@link LeaseEnd}; any later message for it finds nothing to free. A bounded memory of
 * recently ended request ids lets late and duplicate messages be told apart from forged ones.
 *
 * <p><b>Threads.</b> Every public method may be called from any thread; each runs under one private
 * lock. Listeners are called under that lock.
 */
public final class LeaseTable {

  /** How many ended request ids are remembered to classify late messages. */
  static final int RECENTLY_ENDED_CAPACITY = 65_536;

  // Read-by details of the consumers seen lately, so that an acknowledgement does not build the
  // same string again; cleared when it holds more than this many.
  private static final int DETAIL_CACHE = 256;

  // The acknowledgements' outcomes that carry no time and no end, made once: every refusal but an
  // expiry, the read, and a partial acknowledgement for each count of remaining consumers up to
  // PARTIAL_CACHE (a lease waiting for more is made its outcome).
  private static final AckOutcome.Refused[] REFUSED =
      Arrays.stream(Rejection.values())
          .map(r -> new AckOutcome.Refused(r, Optional.empty()))
          .toArray(AckOutcome.Refused[]::new);
  private static final AckOutcome.Read READ = new AckOutcome.Read();
  private static final int PARTIAL_CACHE = 64;
  private static final AckOutcome.Partial[] PARTIAL = new AckOutcome.Partial[PARTIAL_CACHE];

  static {
    for (int remaining = 1; remaining < PARTIAL_CACHE; remaining++) {
      PARTIAL[remaining] = new AckOutcome.Partial(remaining);
    }
  }

  private final Object lock = new Object();
  private final MonotonicClock clock;
  private final long durationNanos;
  private final long maxLifetimeNanos;
  private final LeaseListener listener;
  private final TokenSource tokens = new TokenSource();
  private final Map<String, LiveLease> byRequest = new HashMap<>();
  private final DeadlineHeap byDeadline = new DeadlineHeap();
  private final EndedIds recentlyEnded = new EndedIds(RECENTLY_ENDED_CAPACITY);
  private final Map<String, String> readByDetail = new HashMap<>();
  // What the listener is shown, reused for every report: only touched under the lock.
  private final LeaseView renewedView = new LeaseView();
  private final LeaseEndView endView = new LeaseEndView();
  private long nextSequence;

  /** Creates an empty table; {@code listener} sees every grant, renewal and end. */
  public LeaseTable(MonotonicClock clock, LeaseTerms terms, LeaseListener listener) {
    this.clock = Objects.requireNonNull(clock, "clock");
    Objects.requireNonNull(terms, "terms");
    this.durationNanos = terms.duration().toNanos();
    this.maxLifetimeNanos = terms.maxLifetime().toNanos();
    this.listener = Objects.requireNonNull(listener, "listener");
  }

  /**
   * Grants a lease on {@code blockIds} for {@code requestId}, expiring one lease duration from now.
   *
   * @param binding what the lease was granted for (the protocol's lease binding: request, prompt,
   *     tokens and blocks), handed to the {@link ReadCheck} of every confirmation and
   *     acknowledgement; opaque to the table for the right prompt (the protocol's read digest);
   *     opaque to the table
   * @throws IllegalStateException if a lease for this request id is still live
   * @throws IllegalArgumentException if there are no blocks or fewer than one acknowledgement
   */
  public Lease grant(String requestId, List<Integer> blockIds, int acksRequired, byte[] binding) {
    Objects.requireNonNull(requestId, "requestId");
    Objects.requireNonNull(binding, "binding");
    if (blockIds.isEmpty()) {
      throw new IllegalArgumentException("a lease needs at least one block: " + requestId);
    }
    if (acksRequired < 1) {
      throw new IllegalArgumentException("acksRequired must be at least 1, got " + acksRequired);
    }
    synchronized (lock) {
      if (byRequest.containsKey(requestId)) {
        throw new IllegalStateException("request " + requestId + " already holds a live lease");
      }
      long now = clock.nanoTime();
      // No deadline may read as a coded refusal (RenewCodes); only a clock reading a few
      // nanoseconds from its lowest value moves one.
      long deadline = Math.max(now + durationNanos, RenewCodes.FIRST_DEADLINE);
      LiveLease live =
          new LiveLease(
              requestId,
              tokens.next(),
              BlockList.copyOf(blockIds),
              now,
              deadline,
              Math.max(now + maxLifetimeNanos, deadline),
              acksRequired,
              binding.clone(),
              nextSequence++);
      byRequest.put(requestId, live);
      byDeadline.add(live, live.deadline);
      recentlyEnded.remove(requestId);
      Lease granted = live.snapshot();
      listener.granted(granted);
      return granted;
    }
  }

  /**
   * Records that {@code read}'s consumer read the blocks of {@code requestId}, presenting {@code
   * token}. Accepted only if the lease is live, the token matches, the consumer's last confirmation
   * of this lease ({@link #confirm}) was for the same read digest and skipped tokens, the claim
   * matches the lease's binding and the deadline has not passed. A consumer with no such
   * confirmation is refused as {@link Rejection#NOT_CONFIRMED}, a claim that does not match the
   * binding as {@link Rejection#WRONG_BLOCKS}; neither ends anything. A lease past its deadline
   * ends here as EXPIRED.
   *
   * <p>Each consumer's read counts once: the lease ends as READ with the acknowledgement of the
   * {@code acksRequired}-th distinct consumer; an earlier one is {@link AckOutcome.Partial}. A
   * consumer whose read was counted already is refused as {@link Rejection#ALREADY_ENDED}, as it is
   * once the lease ended.
   */
  public AckOutcome acknowledge(String requestId, String token, ReadClaim read) {
    synchronized (lock) {
      LiveLease live = byRequest.get(requestId);
      Rejection refused = refusal(live, requestId, token);
      if (refused != null) {
        return REFUSED[refused.ordinal()];
      }
      Confirmation confirmed = live.confirmationOf(read.consumerId());
      if (confirmed != null && confirmed.counted) {
        return REFUSED[Rejection.ALREADY_ENDED.ordinal()];
      }
      if (confirmed == null || !read.isRead(confirmed.readDigest, confirmed.skipTokens)) {
        return REFUSED[Rejection.NOT_CONFIRMED.ordinal()];
      }
      if (!read.matches(live.binding)) {
        return REFUSED[Rejection.WRONG_BLOCKS.ordinal()];
      }
      long now = clock.nanoTime();
      if (now >= live.deadline) {
        LeaseEnd end =
            endLocked(
                live, EndReason.EXPIRED, now, "deadline passed before the read was acknowledged");
        return new AckOutcome.Refused(Rejection.EXPIRED, Optional.of(end));
      }
      confirmed.counted = true;
      int remaining = live.acksRequired - ++live.acks;
      if (remaining > 0) {
        return remaining < PARTIAL_CACHE ? PARTIAL[remaining] : new AckOutcome.Partial(remaining);
      }
      reportEnd(live, EndReason.READ, now, readBy(read.consumerId()));
      return READ;
    }
  }

  /**
   * Extends the lease of {@code requestId} to one lease duration from now, never shortening it and
   * never past its maximum lifetime. A lease already past its deadline is not revived: it ends here
   * as EXPIRED.
   */
  public RenewOutcome renew(String requestId, String token) {
    return RenewOutcome.of(renewDeadline(requestId, token));
  }

  /**
   * Renews as {@link #renew} does, with the outcome coded in a {@code long} so that nothing is
   * allocated: the lease's deadline on P's clock when it was renewed ({@link
   * RenewOutcome#isRenewed}), else the code of why the renewal was ignored ({@link
   * RenewOutcome#rejection}).
   */
  public long renewDeadline(String requestId, String token) {
    synchronized (lock) {
      return renewLocked(byRequest.get(requestId), requestId, token);
    }
  }

  /**
   * Confirms, before a consumer commits any block to reading it, that the lease of {@code
   * requestId} is live and that {@code read} matches its binding; renews it as {@link #renew} does,
   * and remembers the read (its digest and skipped tokens) as this consumer's confirmation, which
   * replaces the consumer's earlier one. A claim that does not match is refused as {@link
   * Rejection#WRONG_BLOCKS} and changes nothing; so is, as {@link Rejection#ALREADY_ENDED}, a
   * confirmation from a consumer whose read was acknowledged already.
   *
   * <p>A lease remembers the confirmations of at most {@code acksRequired} consumers: one from yet
   * another consumer replaces the least recent confirmation whose read was not acknowledged, whose
   * consumer's completion is then refused as {@link Rejection#NOT_CONFIRMED}.
   */
  public RenewOutcome confirm(String requestId, String token, ReadClaim read) {
    synchronized (lock) {
      LiveLease live = byRequest.get(requestId);
      if (live != null && live.token.matches(token)) {
        Confirmation earlier = live.confirmationOf(read.consumerId());
        if (earlier != null && earlier.counted) {
          return RenewCodes.ignored(Rejection.ALREADY_ENDED);
        }
        if (!read.matches(live.binding)) {
          return RenewCodes.ignored(Rejection.WRONG_BLOCKS);
        }
      }
      long renewed = renewLocked(live, requestId, token);
      if (RenewCodes.isRenewed(renewed)) {
        live.confirm(read);
      }
      return RenewCodes.outcome(renewed);
    }
  }

  /**
   * Ends the lease of {@code requestId} as RELEASED: its consumer, presenting the token, gives the
   * blocks back without reading them.
   *
   * @return the end, or why nothing ended
   */
  public ReleaseOutcome release(String requestId, String token, String detail) {
    synchronized (lock) {
      LiveLease live = byRequest.get(requestId);
      Rejection refused = refusal(live, requestId, token);
      if (refused != null) {
        return new ReleaseOutcome.Refused(refused);
      }
      return new ReleaseOutcome.Released(
          endLocked(live, EndReason.RELEASED, clock.nanoTime(), detail));
    }
  }

  /** Renews {@code live}; returns the outcome coded as {@link RenewCodes} codes it. */
  private long renewLocked(LiveLease live, String requestId, String token) {
    Rejection refused = refusal(live, requestId, token);
    if (refused != null) {
      return RenewCodes.code(refused);
    }
    long now = clock.nanoTime();
    if (now >= live.deadline) {
      reportEnd(live, EndReason.EXPIRED, now, "deadline passed before the renewal arrived");
      return RenewCodes.code(Rejection.EXPIRED);
    }
    long wanted = Math.min(now + durationNanos, live.maxDeadline);
    if (wanted > live.deadline) {
      live.deadline = wanted;
      byDeadline.postpone(live, wanted);
      live.showIn(renewedView);
      try {
        listener.renewed(renewedView);
      } finally {
        renewedView.close();
      }
    }
    return live.deadline;
  }

  /** Ends the lease of {@code requestId} as REVOKED, if it is live. */
  public Optional<LeaseEnd> revoke(String requestId, String why) {
    synchronized (lock) {
      LiveLease live = byRequest.get(requestId);
      if (live == null) {
        return Optional.empty();
      }
      return Optional.of(endLocked(live, EndReason.REVOKED, clock.nanoTime(), why));
    }
  }

  /** Ends every live lease as REVOKED, e.g. at shutdown. */
  public List<LeaseEnd> revokeAll(String why) {
    synchronized (lock) {
      List<LeaseEnd> ended = new ArrayList<>(byRequest.size());
      long now = clock.nanoTime();
      while (!byDeadline.isEmpty()) {
        ended.add(endLocked((LiveLease) byDeadline.first(), EndReason.REVOKED, now, why));
      }
      return ended;
    }
  }

  /** Ends, as EXPIRED, every lease whose deadline is now or earlier; returns them in order. */
  public List<LeaseEnd> expire() {
    synchronized (lock) {
      if (byDeadline.isEmpty()) {
        return List.of();
      }
      long now = clock.nanoTime();
      if (byDeadline.firstDeadline() > now) {
        return List.of();
      }
      List<LeaseEnd> ended = new ArrayList<>();
      while (!byDeadline.isEmpty() && byDeadline.firstDeadline() <= now) {
        ended.add(
            endLocked(
                (LiveLease) byDeadline.first(),
                EndReason.EXPIRED,
                now,
                "not read before the deadline"));
      }
      return ended;
    }
  }

  /** Whether {@code requestId} holds a live lease; O(1) and allocation-free. */
  public boolean isLive(String requestId) {
    synchronized (lock) {
      return byRequest.containsKey(requestId);
    }
  }

  /** The live lease of {@code requestId}, if any. */
  public Optional<Lease> find(String requestId) {
    synchronized (lock) {
      return Optional.ofNullable(byRequest.get(requestId)).map(LiveLease::snapshot);
    }
  }

  /** How many leases are live. */
  public int size() {
    synchronized (lock) {
      return byRequest.size();
    }
  }

  /** The earliest deadline among live leases, on P's clock. */
  public Optional<Long> soonestDeadline() {
    synchronized (lock) {
      return byDeadline.isEmpty() ? Optional.empty() : Optional.of(byDeadline.firstDeadline());
    }
  }

  /** Why a consumer presenting {@code token} for {@code requestId} is refused, or null if not. */
  private Rejection refusal(LiveLease live, String requestId, String token) {
    if (live == null) {
      return recentlyEnded.contains(requestId) ? Rejection.ALREADY_ENDED : Rejection.UNKNOWN_LEASE;
    }
    return live.token.matches(token) ? null : Rejection.WRONG_TOKEN;
  }

  /** The detail of a lease ended by {@code consumerId}'s acknowledgement. */
  private String readBy(String consumerId) {
    String detail = readByDetail.get(consumerId);
    if (detail == null) {
      if (readByDetail.size() >= DETAIL_CACHE) {
        readByDetail.clear();
      }
      detail = "read by " + consumerId;
      readByDetail.put(consumerId, detail);
    }
    return detail;
  }

  /** Ends {@code live} and returns a snapshot of its end. */
  private LeaseEnd endLocked(LiveLease live, EndReason reason, long now, String detail) {
    LeaseEnd end = new LeaseEnd(live.snapshot(), reason, now, detail);
    reportEnd(live, reason, now, detail);
    return end;
  }

  /** Ends {@code live}: removes it from both indexes and shows its end to the listener. */
  private void reportEnd(LiveLease live, EndReason reason, long now, String detail) {
    byDeadline.remove(live);
    byRequest.remove(live.requestId);
    recentlyEnded.put(live.requestId, reason);
    live.showIn(endView.open(reason, now, detail));
    try {
      listener.ended(endView);
    } finally {
      endView.close();
    }
  }

  /**
   * What one consumer confirmed it reads of a lease, and whether its completion was counted; only
   * touched under {@link #lock}.
   */
  private static final class Confirmation {
    String consumerId;
    byte[] readDigest;
    int skipTokens;
    boolean counted;
    long sequence;
  }

  /** The mutable record behind a lease; only touched under {@link #lock}. */
  private static final class LiveLease extends DeadlineHeap.Entry {
    final String requestId;
    final LeaseToken token;
    final List<Integer> blockIds;
    final long grantedAt;
    final long maxDeadline;
    final int acksRequired;
    final byte[] binding;
    long deadline;
    // The consumers that confirmed a read, at most acksRequired: few, so a scan beats a map. Made
    // at the first confirmation; a consumer confirming again reuses its entry and digest array.
    private Confirmation[] confirmations;
    private int confirmed;
    private long confirmSequence;
    int acks;

    LiveLease(
        String requestId,
        LeaseToken token,
        List<Integer> blockIds,
        long grantedAt,
        long deadline,
        long maxDeadline,
        int acksRequired,
        byte[] binding,
        long sequence) {
      super(sequence);
      this.requestId = requestId;
      this.token = token;
      this.blockIds = blockIds;
      this.grantedAt = grantedAt;
      this.deadline = deadline;
      this.maxDeadline = maxDeadline;
      this.acksRequired = acksRequired;
      this.binding = binding;
    }

    /** {@code consumerId}'s confirmation of this lease, or null if it has none. */
    Confirmation confirmationOf(String consumerId) {
      for (int i = 0; i < confirmed; i++) {
        if (confirmations[i].consumerId.equals(consumerId)) {
          return confirmations[i];
        }
      }
      return null;
    }

    /**
     * Remembers {@code read} as its consumer's confirmation: in place of the consumer's earlier
     * one, in a free entry, or, all {@code acksRequired} taken, in place of the least recent one
     * not counted (there is one while the lease is live: it ends once all are counted).
     */
    void confirm(ReadClaim read) {
      Confirmation entry = confirmationOf(read.consumerId());
      if (entry == null && confirmed < acksRequired) {
        if (confirmations == null) {
          confirmations = new Confirmation[Math.min(acksRequired, 4)];
        } else if (confirmed == confirmations.length) {
          confirmations =
              Arrays.copyOf(confirmations, Math.min(acksRequired, confirmations.length * 2));
        }
        entry = new Confirmation();
        confirmations[confirmed++] = entry;
      } else if (entry == null) {
        for (int i = 0; i < confirmed; i++) {
          Confirmation candidate = confirmations[i];
          if (!candidate.counted && (entry == null || candidate.sequence < entry.sequence)) {
            entry = candidate;
          }
        }
      }
      entry.consumerId = read.consumerId();
      entry.readDigest = read.copyDigest(entry.readDigest);
      entry.skipTokens = read.skipTokens();
      entry.sequence = confirmSequence++;
    }

    Lease snapshot() {
      return new Lease(
          requestId, token, blockIds, grantedAt, deadline, maxDeadline, acksRequired, acks);
    }

    /** Opens {@code view} on this lease as it is now. */
    void showIn(LeaseView view) {
      view.open(requestId, token, blockIds, grantedAt, deadline, maxDeadline, acksRequired, acks);
    }
  }
}
