package io.kvbridge.observe;

/**
 * The names of the spans a connector opens and of their attributes. On P: {@link #LEASE} (from the
 * prefill's end to the lease's end, tagged with {@link #END_REASON}) with the child {@link
 * #LEASE_GRANT}. On D: {@link #LOAD} (from {@code matchRemote} to the request's reception or
 * failure, tagged with {@link #OUTCOME}) with the children {@link #LOAD_CONFIRM}, {@link
 * #LOAD_READ} and {@link #LOAD_VALIDATE}.
 */
public final class TransferSpans {

  /** P: a lease, from the prefill's end (requestFinished) to the lease's end. */
  public static final String LEASE = "kvbridge.lease";

  /** P: fingerprinting the blocks and granting the lease. */
  public static final String LEASE_GRANT = "kvbridge.lease.grant";

  /** D: a load, from matchRemote to received, failed, refused or cancelled. */
  public static final String LOAD = "kvbridge.load";

  /**
   * D: handshake (if the producer is new) and the lease's confirmation, until CONFIRMED or NACK.
   */
  public static final String LOAD_CONFIRM = "kvbridge.load.confirm";

  /** D: the READ, from posting it to its last byte (and the content check). */
  public static final String LOAD_READ = "kvbridge.load.read";

  /** D: the completion sent to P, until P's ACK or NACK. */
  public static final String LOAD_VALIDATE = "kvbridge.load.validate";

  /** Attribute: the engine that opened the span. */
  public static final String ENGINE = "kvbridge.engine";

  /** Attribute: the request's id on the engine that opened the span. */
  public static final String REQUEST_ID = "kvbridge.request_id";

  /** Attribute of {@link #LOAD}: the producer read from. */
  public static final String PRODUCER = "kvbridge.producer";

  /** Attribute of {@link #LEASE}: how the lease ended, {@code read}, {@code expired}, ... */
  public static final String END_REASON = "kvbridge.lease.end_reason";

  /**
   * Attribute of {@link #LOAD}: {@code received}, {@code failed}, {@code refused}, {@code
   * cancelled}, {@code local_hit} (every token was local; the lease was released) or {@code
   * closed}.
   */
  public static final String OUTCOME = "kvbridge.load.outcome";

  /** Attribute of {@link #LOAD_VALIDATE}: P's answer, {@code ack} or {@code nack}. */
  public static final String REPLY = "kvbridge.reply";

  /** Attribute: blocks leased ({@link #LEASE}) or read ({@link #LOAD_READ}). */
  public static final String BLOCKS = "kvbridge.blocks";

  /** Attribute of {@link #LOAD_READ}: the bytes the read moves. */
  public static final String BYTES = "kvbridge.bytes";

  /** Attribute of {@link #LOAD_READ}: the descriptors posted. */
  public static final String DESCRIPTORS = "kvbridge.descriptors";

  /** Event on {@link #LOAD_CONFIRM}: the confirmation was sent (the handshake is done). */
  public static final String CONFIRM_SENT = "confirm sent";

  /** Event on {@link #LOAD_READ}: every rank's read is posted. */
  public static final String POSTED = "posted";

  private TransferSpans() {}
}
