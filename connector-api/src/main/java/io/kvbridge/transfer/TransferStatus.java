package io.kvbridge.transfer;

/** The state of a posted transfer, as {@link Transport#status} reports it. */
public sealed interface TransferStatus {

  /** Still moving bytes. */
  TransferStatus IN_PROGRESS = new InProgress();

  /** Every byte is in place at the destination. */
  TransferStatus DONE = new Done();

  /** Still moving bytes. */
  record InProgress() implements TransferStatus {}

  /** Every byte is in place at the destination. */
  record Done() implements TransferStatus {}

  /** The transfer failed; the destination's contents are undefined. */
  record Failed(String reason) implements TransferStatus {}
}
