package io.kvbridge.lease;

/**
 * Decides whether a consumer's claim about what it read matches a lease, given the lease's binding
 * (the opaque bytes it was granted with). The protocol supplies it: the lease table only holds the
 * binding and asks.
 */
@FunctionalInterface
public interface ReadCheck {

  /** Whether the claim matches a lease granted with {@code binding}. */
  boolean matches(byte[] binding);
}
