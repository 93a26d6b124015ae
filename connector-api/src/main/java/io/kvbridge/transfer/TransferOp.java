package io.kvbridge.transfer;

/** The direction of a one-sided transfer, seen from the initiator. */
public enum TransferOp {
  /** Copy from the remote memory into local memory. */
  READ,
  /** Copy from local memory into the remote memory. */
  WRITE
}
