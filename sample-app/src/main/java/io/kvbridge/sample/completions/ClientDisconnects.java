package io.kvbridge.sample.completions;

import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.web.context.request.NativeWebRequest;
import org.springframework.web.context.request.async.DeferredResult;
import org.springframework.web.context.request.async.DeferredResultProcessingInterceptor;
import org.springframework.web.context.request.async.WebAsyncUtils;

/**
 * Serves requests asynchronously and tells the work done for each whether its client went away
 * meanwhile, so that the work can be cancelled.
 *
 * <p>How a closed connection is seen: the servlet container (Tomcat) does not read a connection
 * while its request is served asynchronously, and reports nothing when the client closes it; the
 * failure would show only when the answer is written. So once a request is asynchronous its body is
 * read to the end and a {@link ReadListener} is set on its input stream, which puts the stream in
 * non-blocking mode: from then on {@link ServletInputStream#available()} tries a non-blocking read
 * of the connection, and answers 0 while the client waits for its answer and more than 0 once the
 * client has closed the connection (the end of the stream, or a reset). Every watched request is
 * checked so every {@code interval}, on one thread, and at once when {@link
 * ClientConnection#isGone()} asks.
 *
 * <p>Bytes that arrive after the request also read as more than 0: HTTP/1.1 clients send no second
 * request on a connection before the first is answered (pipelining is off in common clients), so
 * they too mean the client is not waiting as it should. A client that half-closes its connection
 * after sending its request counts as gone.
 *
 * <p>Thread-safe: {@link #serve} is called on request threads.
 */
public final class ClientDisconnects implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ClientDisconnects.class);

  /** How much of a body the request's handler left unread is read and discarded at most. */
  private static final int MAX_UNREAD_BODY = 64 * 1024;

  private final ScheduledExecutorService checks;
  private final Set<Watch> watched = ConcurrentHashMap.newKeySet();
  private final AtomicLong gone = new AtomicLong();

  /** Checks every watched connection every {@code interval}. */
  public ClientDisconnects(Duration interval) {
    if (interval.isNegative() || interval.isZero()) {
      throw new IllegalArgumentException("the check interval must be positive, got " + interval);
    }
    this.checks =
        Executors.newSingleThreadScheduledExecutor(
            task -> {
              Thread thread = new Thread(task, "client-disconnects");
              thread.setDaemon(true);
              return thread;
            });
    long nanos = interval.toNanos();
    checks.scheduleWithFixedDelay(this::checkAll, nanos, nanos, TimeUnit.NANOSECONDS);
  }

  /**
   * Answers {@code request} asynchronously with what {@code work} completes with: a value, or a
   * failure that the application's exception handlers turn into an answer. {@code work} starts on
   * the request thread once the request is asynchronous, and is given the client's connection,
   * watched until the work completes.
   */
  public <T> DeferredResult<T> serve(
      HttpServletRequest request,
      Function<ClientConnection, ? extends CompletionStage<? extends T>> work) {
    // No container timeout: every piece of work served here bounds its own time.
    DeferredResult<T> answer = new DeferredResult<>(0L);
    WebAsyncUtils.getAsyncManager(request)
        .registerDeferredResultInterceptor(
            ClientDisconnects.class,
            new DeferredResultProcessingInterceptor() {
              @Override
              public <S> void preProcess(NativeWebRequest web, DeferredResult<S> deferred) {
                start(request, answer, work);
              }
            });
    return answer;
  }

  /** How many served requests' clients went away so far. */
  public long disconnects() {
    return gone.get();
  }

  /** Stops checking. */
  @Override
  public void close() {
    checks.shutdownNow();
  }

  private <T> void start(
      HttpServletRequest request,
      DeferredResult<T> answer,
      Function<ClientConnection, ? extends CompletionStage<? extends T>> work) {
    Watch watch = watch(request);
    CompletionStage<? extends T> stage;
    try {
      stage = work.apply(watch == null ? ClientConnection.stays() : watch);
    } catch (RuntimeException e) {
      close(watch);
      answer.setErrorResult(e);
      return;
    }
    stage.whenComplete(
        (value, failure) -> {
          // No read of the connection after the answer is handed over: the container writes it
          // and then recycles the request.
          close(watch);
          if (failure != null) {
            answer.setErrorResult(unwrapped(failure));
          } else {
            answer.setResult(value);
          }
        });
  }

  /** Starts watching the connection of an asynchronous request; null if it cannot be watched. */
  private @Nullable Watch watch(HttpServletRequest request) {
    ServletInputStream in;
    try {
      in = request.getInputStream();
      byte[] discard = new byte[8192];
      int left = MAX_UNREAD_BODY;
      int n;
      while (left > 0 && (n = in.read(discard, 0, Math.min(discard.length, left))) != -1) {
        left -= n;
      }
      if (left <= 0 && !in.isFinished()) {
        LOG.debug("{}: body not read to the end; the client's connection is not watched", request);
        return null;
      }
      Watch watch = new Watch(in);
      in.setReadListener(watch);
      watched.add(watch);
      return watch;
    } catch (IOException | IllegalStateException e) {
      LOG.debug("{}: the client's connection cannot be watched", request, e);
      return null;
    }
  }

  private void close(@Nullable Watch watch) {
    if (watch != null) {
      watch.close();
      watched.remove(watch);
    }
  }

  private void checkAll() {
    for (Watch watch : watched) {
      try {
        watch.check();
      } catch (RuntimeException e) {
        LOG.warn("checking a client's connection failed", e);
      }
    }
  }

  private static Throwable unwrapped(Throwable failure) {
    Throwable t = failure;
    while (t instanceof CompletionException && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  /** One watched connection; also the read listener its stream needs in non-blocking mode. */
  private final class Watch implements ClientConnection, ReadListener {
    private final ServletInputStream in;
    // Guarded by this: whether the request is still served, and what to run when its client goes.
    private boolean open = true;
    private boolean goneSeen;
    private final List<Runnable> actions = new ArrayList<>();

    Watch(ServletInputStream in) {
      this.in = in;
    }

    @Override
    public boolean isGone() {
      check();
      synchronized (this) {
        return goneSeen;
      }
    }

    @Override
    public void onGone(Runnable action) {
      Objects.requireNonNull(action, "action");
      synchronized (this) {
        if (!goneSeen) {
          if (open) {
            actions.add(action);
          }
          return;
        }
      }
      action.run();
    }

    void check() {
      boolean closed;
      synchronized (this) {
        if (!open || goneSeen) {
          return;
        }
        try {
          closed = in.available() > 0;
        } catch (IOException e) {
          closed = true;
        }
      }
      if (closed) {
        gone();
      }
    }

    void close() {
      synchronized (this) {
        open = false;
        actions.clear();
      }
    }

    private void gone() {
      List<Runnable> run;
      synchronized (this) {
        if (!open || goneSeen) {
          return;
        }
        goneSeen = true;
        run = List.copyOf(actions);
        actions.clear();
      }
      gone.incrementAndGet();
      watched.remove(this);
      // Outside the lock: the actions cancel work, which may end the request and close this.
      for (Runnable action : run) {
        try {
          action.run();
        } catch (RuntimeException e) {
          LOG.warn("cancelling the work of a client that went away failed", e);
        }
      }
    }

    @Override
    public void onDataAvailable() {
      // Nothing is read: the body was read before the stream went non-blocking.
    }

    @Override
    public void onAllDataRead() {}

    @Override
    public void onError(Throwable failure) {
      gone();
    }
  }
}
