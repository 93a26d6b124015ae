package io.kvbridge.discovery.etcd;

import io.etcd.jetcd.ByteSequence;
import io.kvbridge.time.DurationText;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * How the discovery thread waits on etcd: every request is bounded by a timeout, and every way it
 * can fail (an error, no answer in time, an interrupt) becomes one {@link EtcdUnavailableException}
 * that the caller reads as "etcd cannot be reached now", never as a peer being gone.
 */
final class EtcdRequests {

  private EtcdRequests() {}

  /** {@code future}'s value, waiting at most {@code timeout}. */
  static <T> T await(CompletableFuture<T> future, Duration timeout) {
    try {
      return future.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new EtcdUnavailableException(e);
    } catch (ExecutionException e) {
      throw new EtcdUnavailableException(e.getCause());
    } catch (TimeoutException e) {
      future.cancel(true);
      throw new EtcdUnavailableException(
          new TimeoutException("no answer within " + DurationText.of(timeout)));
    }
  }

  /** {@code text} as etcd's bytes. */
  static ByteSequence bytes(String text) {
    return ByteSequence.from(text, StandardCharsets.UTF_8);
  }

  /** What went wrong, in a few words: the innermost message, or the failure's kind. */
  static String describe(Throwable e) {
    Throwable cause = e;
    while ((cause instanceof ExecutionException || cause instanceof EtcdUnavailableException)
        && cause.getCause() != null) {
      cause = cause.getCause();
    }
    String message = cause.getMessage();
    return message == null || message.isBlank() ? cause.getClass().getSimpleName() : message;
  }

  /** The time since {@code nanos}, in whole seconds (whole milliseconds under a second). */
  static String elapsedSince(long nanos) {
    Duration elapsed = Duration.ofNanos(System.nanoTime() - nanos);
    return DurationText.of(
        elapsed.toSeconds() >= 1
            ? Duration.ofSeconds(elapsed.toSeconds())
            : Duration.ofMillis(elapsed.toMillis()));
  }

  /** A request to etcd failed or was not answered in time; the cause says how. */
  static final class EtcdUnavailableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    EtcdUnavailableException(Throwable cause) {
      super(cause);
    }
  }
}
