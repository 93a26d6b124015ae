package io.kvbridge.wire;

import java.util.function.BinaryOperator;

/**
 * A responder that greets with fixed bytes and answers with {@code answerer(greeting, request)}.
 */
record TestResponder(byte[] greeting, BinaryOperator<byte[]> answerer)
    implements HandshakeChannel.Responder {

  /** Greets with nothing and echoes the request. */
  static TestResponder echo() {
    return new TestResponder(new byte[0], (greeting, request) -> request);
  }

  @Override
  public byte[] greet() {
    return greeting.clone();
  }

  @Override
  public byte[] answer(byte[] greeting, byte[] request) {
    return answerer.apply(greeting, request);
  }

  /** {@code first} followed by {@code second}. */
  static byte[] concat(byte[] first, byte[] second) {
    byte[] out = new byte[first.length + second.length];
    System.arraycopy(first, 0, out, 0, first.length);
    System.arraycopy(second, 0, out, first.length, second.length);
    return out;
  }
}
