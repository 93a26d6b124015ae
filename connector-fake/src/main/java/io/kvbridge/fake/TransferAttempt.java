package io.kvbridge.fake;

import io.kvbridge.transfer.TransferOp;
import java.util.function.Predicate;

/**
 * A transfer being posted on a {@link FakeFabric}, as {@link FakeFaults} rules see it. Rules are
 * consulted after the transfer passed every check, so a matching fault hits a transfer that would
 * otherwise have run.
 *
 * @param op READ or WRITE, seen from the initiator
 * @param initiator the agent that posted it
 * @param remoteAgent the peer whose memory it reads or writes
 * @param bytes the number of bytes it moves
 */
public record TransferAttempt(TransferOp op, String initiator, String remoteAgent, long bytes) {

  /** Matches every transfer. */
  public static Predicate<TransferAttempt> any() {
    return t -> true;
  }

  /** Matches every READ. */
  public static Predicate<TransferAttempt> reads() {
    return t -> t.op == TransferOp.READ;
  }

  /** Matches READs posted by {@code agentName}. */
  public static Predicate<TransferAttempt> readsBy(String agentName) {
    return t -> t.op == TransferOp.READ && t.initiator.equals(agentName);
  }

  /** Matches READs of {@code agentName}'s memory. */
  public static Predicate<TransferAttempt> readsFrom(String agentName) {
    return t -> t.op == TransferOp.READ && t.remoteAgent.equals(agentName);
  }
}
