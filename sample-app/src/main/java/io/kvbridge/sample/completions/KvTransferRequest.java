package io.kvbridge.sample.completions;

import io.kvbridge.spi.InvalidTransferParamsException;
import io.kvbridge.spi.TransferParams;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * What a request's {@code kv_transfer_params} asks of a node: nothing, to hold the KV for a decode
 * node ({@code {"do_remote_decode": true}}, sent to a prefill node), or to load a prefill node's KV
 * (its returned parameters, sent to a decode node).
 */
public sealed interface KvTransferRequest {

  /** No transfer: compute everything locally. */
  record None() implements KvTransferRequest {}

  /** A decode node will read this request's KV: hold it under a lease and return parameters. */
  record RemoteDecode() implements KvTransferRequest {}

  /**
   * Load the prompt's KV from a prefill node.
   *
   * @param params the prefill node's parameters, checked by {@link TransferParams#fromMap}
   */
  record Load(TransferParams params) implements KvTransferRequest {}

  /** The flag a router sets on a request for a prefill node. */
  String DO_REMOTE_DECODE = "do_remote_decode";

  /**
   * Reads {@code kv_transfer_params}. Absent or empty: {@link None}; {@code do_remote_decode:
   * true}: {@link RemoteDecode}; anything else is a prefill node's parameters.
   *
   * @throws InvalidTransferParamsException naming the first missing or malformed field
   */
  static KvTransferRequest parse(@Nullable Map<String, Object> map) {
    if (map == null || map.isEmpty()) {
      return new None();
    }
    if (map.containsKey(DO_REMOTE_DECODE)) {
      Object flag = map.get(DO_REMOTE_DECODE);
      if (!(flag instanceof Boolean remote)) {
        throw new InvalidTransferParamsException(
            DO_REMOTE_DECODE + " must be true or false, got " + flag);
      }
      if (remote) {
        return new RemoteDecode();
      }
      if (Set.of(DO_REMOTE_DECODE, "do_remote_prefill").containsAll(map.keySet())) {
        return new None();
      }
    }
    return new Load(TransferParams.fromMap(map));
  }
}
