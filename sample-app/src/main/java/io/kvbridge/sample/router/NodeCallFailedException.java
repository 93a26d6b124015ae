package io.kvbridge.sample.router;

import io.kvbridge.sample.completions.CompletionFailedException;
import org.jspecify.annotations.Nullable;

/** The router's call to a prefill or decode node failed; the message names the node and why. */
public class NodeCallFailedException extends CompletionFailedException {

  private static final long serialVersionUID = 1L;

  /** {@code status} is what the router answers its client with. */
  public NodeCallFailedException(
      int status, String type, String message, @Nullable Throwable cause) {
    super(status, type, message, cause);
  }
}
