package io.kvbridge.wire;

import io.kvbridge.net.HandshakeAddress;
import io.kvbridge.net.HandshakeSecret;
import java.io.IOException;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.function.LongSupplier;

/**
 * D's side of one handshake conversation, as {@code docs/protocol.md} specifies it. Without a
 * secret: reads the greeting, sends the request, reads the answer. With one: refuses a greeting
 * that does not require the secret, sends only a fresh challenge, checks P's proof, and only then
 * sends its request, sealed; the answer must be sealed too (or a plain refusal, which carries
 * nothing). Nothing of D's own leaves before P proved the secret, and nothing P sends is believed
 * unless it opened under this conversation's key.
 *
 * <p>Threads: {@link #run} may be called from any thread; one conversation runs on the calling
 * thread.
 */
public final class ConsumerHandshake {

  /**
   * What a conversation brought back.
   *
   * @param response P's acceptance or refusal
   * @param requestSentNanos the local clock just before the request was sent (for clock sampling)
   * @param answerReceivedNanos the local clock just after the answer arrived
   */
  public record Outcome(
      Handshake.Response response, long requestSentNanos, long answerReceivedNanos) {}

  /** A frame of P's that this consumer refuses; the conversation ends with it. */
  public static final class RefusedFrameException extends IOException {
    private static final long serialVersionUID = 1L;

    private final boolean authentication;

    RefusedFrameException(String message, boolean authentication) {
      super(message);
      this.authentication = authentication;
    }

    /** Whether the frame failed authentication (rather than merely not decoding). */
    public boolean authentication() {
      return authentication;
    }
  }

  /** How long to wait before connecting again when P closed a connection it had not answered. */
  private static final long RETRY_PAUSE_NANOS = 5_000_000;

  /** The most connections one handshake opens when P keeps closing them before answering. */
  private static final int MAX_ATTEMPTS = 32;

  private ConsumerHandshake() {}

  /**
   * Holds one conversation with the producer at {@code address}.
   *
   * @param secret the deployment's secret, if D has one: the producer must then prove it
   * @param clock the local monotonic clock, read around the request
   * @throws RefusedFrameException if a frame of P's is malformed, or fails authentication
   * @throws IOException if the producer cannot be reached, closes early, or the deadline passes
   */
  public static Outcome run(
      HandshakeChannel channel,
      HandshakeAddress address,
      Handshake.Request request,
      Optional<HandshakeSecret> secret,
      Duration deadline,
      LongSupplier clock)
      throws IOException {
    Objects.requireNonNull(request, "request");
    long start = clock.getAsLong();
    long budget = TcpHandshakeChannel.saturatedNanos(deadline);
    for (int attempt = 1; ; attempt++) {
      Dialogue dialogue = new Dialogue(request, secret, clock, address);
      byte[] answer;
      try {
        Duration left = Duration.ofNanos(Math.max(1, budget - (clock.getAsLong() - start)));
        answer = channel.converse(address, dialogue, left);
      } catch (java.io.EOFException | java.net.SocketException e) {
        // P closed a connection it had accepted before answering: under a flood it makes room by
        // closing connections that proved nothing yet. A handshake may be held again (P keeps what
        // it loaded for this incarnation), so connect again while time and attempts are left. A
        // refused or unreachable connection is not retried: nobody is there.
        if (e instanceof java.net.ConnectException
            || e instanceof java.net.NoRouteToHostException
            || attempt == MAX_ATTEMPTS
            || clock.getAsLong() - start + RETRY_PAUSE_NANOS >= budget) {
          throw e;
        }
        pause();
        continue;
      }
      long received = clock.getAsLong();
      return new Outcome(dialogue.response(answer), dialogue.sentAt, received);
    }
  }

  private static void pause() throws java.io.InterruptedIOException {
    try {
      Thread.sleep(java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(RETRY_PAUSE_NANOS));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new java.io.InterruptedIOException("handshake interrupted");
    }
  }

  /** The consumer's side of the conversation, frame by frame. */
  private static final class Dialogue implements HandshakeChannel.Dialogue {
    private final Handshake.Request request;
    private final Optional<HandshakeSecret> secret;
    private final LongSupplier clock;
    private final HandshakeAddress address;
    private byte[] greeting;
    private byte[] challenge;
    private HandshakeKeys keys;
    private boolean requestSent;
    long sentAt;

    Dialogue(
        Handshake.Request request,
        Optional<HandshakeSecret> secret,
        LongSupplier clock,
        HandshakeAddress address) {
      this.request = request;
      this.secret = secret;
      this.clock = clock;
      this.address = address;
    }

    @Override
    public Optional<byte[]> next(byte[] received) throws IOException {
      if (greeting == null) {
        return answerGreeting(received);
      }
      if (requestSent) {
        return Optional.empty();
      }
      return Optional.of(sendSealed(received));
    }

    private Optional<byte[]> answerGreeting(byte[] frame) throws IOException {
      greeting = frame;
      Handshake.Greeting decoded;
      try {
        decoded = Handshake.decodeGreeting(frame);
      } catch (MalformedMessageException e) {
        throw new RefusedFrameException("a malformed greeting: " + e.getMessage(), false);
      }
      if (secret.isPresent() && !decoded.authenticationRequired()) {
        throw new RefusedFrameException(
            "the producer does not authenticate handshakes, and this consumer trusts only"
                + " producers that prove the deployment's secret",
            true);
      }
      if (secret.isEmpty() && decoded.authenticationRequired()) {
        throw new RefusedFrameException(
            "the producer requires the deployment's secret and this consumer has none (set the"
                + " same kvbridge.handshake.secret on both sides); nothing was sent",
            true);
      }
      if (secret.isEmpty()) {
        requestSent = true;
        sentAt = clock.getAsLong();
        return Optional.of(Handshake.encode(request));
      }
      Handshake.Challenge fresh = Handshake.Challenge.fresh();
      challenge = Handshake.encode(fresh);
      keys = HandshakeKeys.derive(secret.get(), decoded.nonce(), fresh.nonce());
      return Optional.of(challenge);
    }

    private byte[] sendSealed(byte[] proofFrame) throws IOException {
      byte[] proof;
      try {
        proof = Handshake.decodeProof(proofFrame);
      } catch (MalformedMessageException e) {
        if (Handshake.isRefused(proofFrame)) {
          throw new RefusedFrameException(
              "the producer refused the challenge: " + reasonOf(proofFrame), false);
        }
        throw new RefusedFrameException(
            "the producer at "
                + address
                + " answered the challenge with no proof ("
                + e.getMessage()
                + "); nothing of this consumer's was sent",
            true);
      }
      if (!keys.proves(proof, greeting, challenge)) {
        throw new RefusedFrameException(
            "the producer at "
                + address
                + " did not prove the deployment's secret; nothing of this consumer's was sent",
            true);
      }
      requestSent = true;
      sentAt = clock.getAsLong();
      return keys.sealRequest(Handshake.encode(request));
    }

    /** The decoded answer: opened under the answer key with a secret; a plain refusal passes. */
    Handshake.Response response(byte[] answer) throws RefusedFrameException {
      if (!requestSent) {
        throw new RefusedFrameException(
            "the conversation ended before the request was sent", false);
      }
      try {
        if (keys == null || Handshake.isRefused(answer)) {
          return Handshake.decodeResponse(answer);
        }
        return Handshake.decodeResponse(keys.openAnswer(answer));
      } catch (HandshakeAuthenticationException e) {
        throw new RefusedFrameException(
            "the producer's answer does not open: " + e.getMessage(), true);
      } catch (MalformedMessageException e) {
        throw new RefusedFrameException(
            "the producer answered a handshake that is refused: " + e.getMessage(), false);
      }
    }

    private static String reasonOf(byte[] refusal) {
      try {
        return ((Handshake.Refused) Handshake.decodeResponse(refusal)).reason();
      } catch (MalformedMessageException e) {
        return "(a malformed refusal: " + e.getMessage() + ")";
      }
    }
  }
}
