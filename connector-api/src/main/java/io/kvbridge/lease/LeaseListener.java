package io.kvbridge.lease;

/**
 * Observes a {@link LeaseTable}. Called while the table's lock is held, on whichever thread changed
 * the table: implementations must be quick and must not call back into the table.
 */
public interface LeaseListener {

  /** A listener that does nothing. */
  LeaseListener NONE = new LeaseListener() {};

  /** A lease was granted. */
  default void granted(Lease lease) {}

  /** A lease's deadline moved later. */
  default void renewed(Lease lease) {}

  /** A lease ended; called exactly once per lease. */
  default void ended(LeaseEnd end) {}
}
