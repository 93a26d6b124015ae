package io.kvbridge.sample.router;

import io.kvbridge.sample.completions.CompletionFailedException;
import io.kvbridge.sample.node.KvLoadTimedOutException;
import io.kvbridge.sample.node.NodeKind;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The router's call to a prefill or decode node failed; the message names the node and why. How it
 * failed decides what the router does next: whether the node is skipped until it is probed UP
 * again, whether the call is tried on another node, and what the client is answered.
 */
public class NodeCallFailedException extends CompletionFailedException {

  private static final long serialVersionUID = 1L;

  /**
   * A decode node's answers when the prefill node failed it, not the decode node: it could not load
   * the KV (about P's lease), or it was still loading when its request timed out (P did not finish
   * the transfer).
   */
  private static final Set<String> PREFILL_NODES_FAULT =
      Set.of("kv_load_failed", KvLoadTimedOutException.TYPE);

  /** How a call failed. */
  public enum Kind {
    /** The node could not be reached: the request never got to it. */
    UNREACHABLE,
    /** The node did not answer within the router's read timeout. */
    TIMED_OUT,
    /** The connection failed during the call; the node may have received the request. */
    BROKEN,
    /** The node answered with an error status. */
    ANSWERED_ERROR,
    /** The node answered with a success status but no completion the router can read. */
    UNREADABLE
  }

  private final NodeKind node;
  private final Kind kind;
  private final int nodeStatus;
  private final @Nullable String nodeErrorType;

  private NodeCallFailedException(
      NodeKind node,
      Kind kind,
      int nodeStatus,
      @Nullable String nodeErrorType,
      String message,
      @Nullable Throwable cause) {
    super(answerStatus(node, kind, nodeStatus, nodeErrorType), type(node, kind), message, cause);
    this.node = node;
    this.kind = kind;
    this.nodeStatus = nodeStatus;
    this.nodeErrorType = nodeErrorType;
  }

  /** A call that failed without an answer from the node. */
  static NodeCallFailedException withoutAnswer(
      NodeKind node, Kind kind, String message, @Nullable Throwable cause) {
    if (kind == Kind.ANSWERED_ERROR) {
      throw new IllegalArgumentException("an answered error has a status: " + message);
    }
    return new NodeCallFailedException(node, kind, 0, null, message, cause);
  }

  /** A node's error answer, with its status and error type. */
  static NodeCallFailedException answered(
      NodeKind node, int status, @Nullable String errorType, String message) {
    return new NodeCallFailedException(node, Kind.ANSWERED_ERROR, status, errorType, message, null);
  }

  /** This failure, its message saying which call failed before it. */
  NodeCallFailedException after(NodeCallFailedException earlier) {
    NodeCallFailedException both =
        new NodeCallFailedException(
            node,
            kind,
            nodeStatus,
            nodeErrorType,
            getMessage() + "; tried first: " + earlier.getMessage(),
            getCause());
    both.addSuppressed(earlier);
    return both;
  }

  /** How the call failed. */
  public Kind kind() {
    return kind;
  }

  /** The node's HTTP status, 0 if it did not answer. */
  public int nodeStatus() {
    return nodeStatus;
  }

  /**
   * Whether the failure is the node's, so that the router skips it until a probe finds it UP: no
   * answer (within the router's read timeout), an unreadable answer, a 4xx that does not say what
   * the request got wrong, or a 5xx other than a decode node's failed or timed-out load (about the
   * prefill node: its lease is gone, or it did not finish the transfer).
   */
  boolean blamesNode() {
    return !refusedTheRequest()
        && !(nodeErrorType != null && PREFILL_NODES_FAULT.contains(nodeErrorType));
  }

  /**
   * Whether a prefill call is tried on another prefill node: any failure but the client's 4xx (one
   * that says what the request got wrong).
   */
  boolean retriedOnAnotherPrefillNode() {
    return !refusedTheRequest();
  }

  /**
   * Whether the node's application refused the request itself: a 4xx with an error in the
   * application's shape, which says what the request got wrong. A 4xx without one did not come from
   * the application but from the web server in front of it, which answers so in a race when it
   * stops taking requests during a graceful shutdown (it means 503 but answers 400 for the missing
   * {@code Host} of a request whose headers it did not read): that is the node's failure.
   */
  private boolean refusedTheRequest() {
    return refusedTheRequest(kind, nodeStatus, nodeErrorType);
  }

  private static boolean refusedTheRequest(
      Kind kind, int nodeStatus, @Nullable String nodeErrorType) {
    return kind == Kind.ANSWERED_ERROR
        && nodeStatus >= 400
        && nodeStatus < 500
        && nodeErrorType != null;
  }

  /**
   * Whether the decode node certainly neither loaded nor will load the prefill node's KV, so that
   * another decode node may take the same parameters: it could not be reached, or it refused the
   * request with 503 (its engine is shut down or failed). After anything else (a timeout, a broken
   * connection, a failed load) it may still be reading, or the lease is gone.
   */
  boolean decodeNeverStarted() {
    return kind == Kind.UNREACHABLE || (kind == Kind.ANSWERED_ERROR && nodeStatus == 503);
  }

  private static int answerStatus(
      NodeKind node, Kind kind, int nodeStatus, @Nullable String nodeErrorType) {
    // The client's own mistakes (a bad prompt) show up as the prefill node's 4xx with a reason;
    // anything the decode node refuses came from the prefill node's answer, not from the client.
    if (kind == Kind.TIMED_OUT || nodeStatus == 504) {
      return 504;
    }
    if (node == NodeKind.PREFILL && refusedTheRequest(kind, nodeStatus, nodeErrorType)) {
      return nodeStatus;
    }
    return 502;
  }

  private static String type(NodeKind node, Kind kind) {
    return node.id()
        + switch (kind) {
          case UNREACHABLE, BROKEN -> "_unreachable";
          case TIMED_OUT -> "_timeout";
          case ANSWERED_ERROR, UNREADABLE -> "_failed";
        };
  }
}
