package io.kvbridge.wire;

import java.util.function.BinaryOperator;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * A responder whose conversations are of one round: they greet with fixed bytes and answer the
 * consumer's one frame with {@code answerer(greeting, request)}.
 */
record TestResponder(byte[] greeting, BinaryOperator<byte[]> answerer)
    implements HandshakeChannel.Responder {

  /** Greets with nothing and echoes the request. */
  static TestResponder echo() {
    return new TestResponder(new byte[0], (greeting, request) -> request);
  }

  @Override
  public HandshakeChannel.Conversation open() {
    byte[] sent = greeting.clone();
    return oneRound(sent, frame -> answerer.apply(sent, frame));
  }

  /**
   * A responder that echoes the request, greeting each connection with what {@code greeting}
   * returns when the connection is accepted (it may block or throw, as a test needs).
   */
  static HandshakeChannel.Responder echoGreetingBy(Supplier<byte[]> greeting) {
    return () -> oneRound(greeting.get(), frame -> frame);
  }

  /**
   * A responder that greets with {@code {7}}, echoes the first frame marking the consumer proven
   * (so the connection stays open for a second frame and may not be evicted), and echoes the second
   * as its last reply, the consumer served.
   */
  static HandshakeChannel.Responder provingEcho() {
    return () ->
        new HandshakeChannel.Conversation() {
          private boolean proven;

          @Override
          public byte[] greeting() {
            return new byte[] {7};
          }

          @Override
          public HandshakeChannel.Reply reply(byte[] frame) {
            if (proven) {
              return new HandshakeChannel.Reply(frame, true, true, true);
            }
            proven = true;
            return new HandshakeChannel.Reply(frame, false, true, false);
          }
        };
  }

  /** A conversation that greets with {@code greeting} and ends with {@code answer}'s reply. */
  private static HandshakeChannel.Conversation oneRound(
      byte[] greeting, UnaryOperator<byte[]> answer) {
    return new HandshakeChannel.Conversation() {
      @Override
      public byte[] greeting() {
        return greeting;
      }

      @Override
      public HandshakeChannel.Reply reply(byte[] frame) {
        return HandshakeChannel.Reply.end(answer.apply(frame));
      }
    };
  }

  /** {@code first} followed by {@code second}. */
  static byte[] concat(byte[] first, byte[] second) {
    byte[] out = new byte[first.length + second.length];
    System.arraycopy(first, 0, out, 0, first.length);
    System.arraycopy(second, 0, out, first.length, second.length);
    return out;
  }
}
