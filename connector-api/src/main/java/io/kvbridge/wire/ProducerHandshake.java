package io.kvbridge.wire;

import io.kvbridge.net.HandshakeSecret;
import io.kvbridge.wire.HandshakeChannel.Conversation;
import io.kvbridge.wire.HandshakeChannel.Reply;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;

/**
 * P's side of every handshake conversation, as {@code docs/protocol.md} specifies it: greets with a
 * fresh nonce; without a secret, decodes the request and answers; with one, answers D's challenge
 * with its proof, then opens the sealed request (a request that does not open is refused before
 * anything of P's is looked at) and seals its answer. What to answer a request is the {@code
 * decision}'s: this class only holds the conversation.
 *
 * <p>Threads: {@link #open} and {@link Conversation#greeting} run on the channel's I/O thread,
 * {@link Conversation#reply} on its workers, one call at a time per conversation; the decision and
 * the listener may be called from several workers at once.
 */
public final class ProducerHandshake implements HandshakeChannel.Responder {

  /** Hears of the frames refused before a decision. */
  public interface Listener {
    /** A listener that counts nothing, for a producer whose refusals nobody watches. */
    Listener NONE =
        new Listener() {
          @Override
          public void unauthenticated(String why) {}

          @Override
          public void malformed(String why) {}
        };

    /** A request that did not prove the deployment's secret; {@code why} says how. */
    void unauthenticated(String why);

    /** A frame that does not decode; {@code why} says how. */
    void malformed(String why);
  }

  private final Optional<HandshakeSecret> secret;
  private final Function<Handshake.Request, Handshake.Response> decision;
  private final Listener listener;

  /**
   * @param secret the deployment's secret, if any: every conversation then requires it
   * @param decision what to answer a request that decoded (and, with a secret, authenticated)
   * @param listener hears of refused frames, to count them
   */
  public ProducerHandshake(
      Optional<HandshakeSecret> secret,
      Function<Handshake.Request, Handshake.Response> decision,
      Listener listener) {
    this.secret = Objects.requireNonNull(secret, "secret");
    this.decision = Objects.requireNonNull(decision, "decision");
    this.listener = Objects.requireNonNull(listener, "listener");
  }

  @Override
  public Conversation open() {
    return secret
        .<Conversation>map(AuthenticatedConversation::new)
        .orElseGet(OpenConversation::new);
  }

  /** The reply to a decoded request: the decision's answer, encoded, sealed by {@code seal}. */
  private Reply decide(Handshake.Request request, Function<byte[], byte[]> seal) {
    Handshake.Response response = decision.apply(request);
    return new Reply(
        seal.apply(Handshake.encode(response)), true, true, response instanceof Handshake.Accepted);
  }

  private Reply malformed(String what, MalformedMessageException e) {
    String why = "malformed handshake " + what + ": " + e.getMessage();
    listener.malformed(why);
    return Reply.end(Handshake.encode(new Handshake.Refused(why)));
  }

  private Reply unauthenticated(String why) {
    listener.unauthenticated(why);
    return Reply.end(
        Handshake.encode(new Handshake.Refused("handshake not authenticated: " + why)));
  }

  /** Without a secret: greeting, request, answer. */
  private final class OpenConversation implements Conversation {
    @Override
    public byte[] greeting() {
      return Handshake.encode(Handshake.Greeting.fresh(false));
    }

    @Override
    public Reply reply(byte[] frame) {
      Handshake.Request request;
      try {
        request = Handshake.decodeRequest(frame);
      } catch (MalformedMessageException e) {
        return malformed("request", e);
      }
      return decide(request, answer -> answer);
    }
  }

  /** With a secret: greeting, challenge, proof, sealed request, sealed answer. */
  private final class AuthenticatedConversation implements Conversation {
    private final HandshakeSecret secret;
    private byte[] greeting;
    private HandshakeKeys keys;

    AuthenticatedConversation(HandshakeSecret secret) {
      this.secret = secret;
    }

    @Override
    public byte[] greeting() {
      greeting = Handshake.encode(Handshake.Greeting.fresh(true));
      return greeting;
    }

    @Override
    public Reply reply(byte[] frame) {
      return keys == null ? proveTo(frame) : answer(frame);
    }

    private Reply proveTo(byte[] challengeFrame) {
      Handshake.Challenge challenge;
      try {
        challenge = Handshake.decodeChallenge(challengeFrame);
      } catch (MalformedMessageException e) {
        if (Handshake.isRequest(challengeFrame)) {
          return unauthenticated(
              "this producer requires the deployment's secret and the consumer sent its request"
                  + " without it (set the same kvbridge.handshake.secret on both sides)");
        }
        return malformed("challenge", e);
      }
      byte[] nonce;
      try {
        nonce = Handshake.decodeGreeting(greeting).nonce();
      } catch (MalformedMessageException e) {
        throw new IllegalStateException("this producer's own greeting did not decode", e);
      }
      keys = HandshakeKeys.derive(secret, nonce, challenge.nonce());
      return Reply.more(Handshake.encodeProof(keys.proof(greeting, challengeFrame)));
    }

    private Reply answer(byte[] sealedRequest) {
      byte[] requestFrame;
      try {
        requestFrame = keys.openRequest(sealedRequest);
      } catch (HandshakeAuthenticationException e) {
        return unauthenticated(e.getMessage());
      } catch (MalformedMessageException e) {
        return malformed("sealed request", e);
      }
      Handshake.Request request;
      try {
        request = Handshake.decodeRequest(requestFrame);
      } catch (MalformedMessageException e) {
        // It authenticated: a peer with the secret that speaks another version, say. Sealed, so
        // only it reads why.
        listener.malformed("malformed handshake request: " + e.getMessage());
        return new Reply(
            keys.sealAnswer(
                Handshake.encode(
                    new Handshake.Refused("malformed handshake request: " + e.getMessage()))),
            true,
            true,
            false);
      }
      return decide(request, keys::sealAnswer);
    }
  }
}
