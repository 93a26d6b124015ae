package io.kvbridge.lease;

/**
 * Observes a {@link LeaseTable}. Called while the table's lock is held, on whichever thread changed
 * the table: implementations must be quick and must not call back into the table.
 *
 * <p><b>Views or snapshots.</b> The table reports a renewal and an end through a view of its own
 * record ({@link #renewed(LeaseView)}, {@link #ended(LeaseEndView)}), valid only during the call,
 * so that reporting them allocates nothing. By default each view method hands its snapshot method
 * ({@link #renewed(Lease)}, {@link #ended(LeaseEnd)}) an immutable copy: a listener that keeps what
 * it sees overrides the snapshot methods; one that only reads (counts, logs, records numbers)
 * overrides the view methods instead. Either way it learns the same facts.
 *
 * <p>A listener that forwards to others overrides the view methods and forwards the views (a
 * listener it forwards to may override only those); it forwards snapshots from the snapshot
 * methods, which only the default view methods and callers holding a snapshot call.
 */
public interface LeaseListener {

  /** A listener that does nothing, and allocates nothing for the table's reports. */
  LeaseListener NONE =
      new LeaseListener() {
        @Override
        public void renewed(LeaseView lease) {}

        @Override
        public void ended(LeaseEndView end) {}
      };

  /** A lease was granted; {@code lease} is the snapshot the grant returns. */
  default void granted(Lease lease) {}

  /**
   * A lease's deadline moved later; {@code lease} shows it with its new deadline, and is valid only
   * during this call. The table calls this method; by default it hands {@link #renewed(Lease)} a
   * snapshot.
   */
  default void renewed(LeaseView lease) {
    renewed(lease.snapshot());
  }

  /**
   * A lease's deadline moved later, as a snapshot the listener may keep; called by the default
   * {@link #renewed(LeaseView)}.
   */
  default void renewed(Lease lease) {}

  /**
   * A lease ended; called exactly once per lease. {@code end} is valid only during this call. The
   * table calls this method; by default it hands {@link #ended(LeaseEnd)} a snapshot.
   */
  default void ended(LeaseEndView end) {
    ended(end.snapshot());
  }

  /**
   * A lease ended, as a snapshot the listener may keep; called by the default {@link
   * #ended(LeaseEndView)}, so exactly once per lease.
   */
  default void ended(LeaseEnd end) {}
}
