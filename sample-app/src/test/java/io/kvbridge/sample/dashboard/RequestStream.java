package io.kvbridge.sample.dashboard;

import io.kvbridge.sample.HttpApi;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import tools.jackson.databind.json.JsonMapper;

/**
 * Completions sent through the router without pause by a few threads, until closed: the workload a
 * dashboard shows. What each request gets does not matter here (the router may drop it after
 * prefill); that requests keep flowing does.
 *
 * <p>Threads: created and closed by one test thread; its own threads send.
 */
final class RequestStream implements AutoCloseable {

  private final List<Thread> senders = new ArrayList<>();
  private final AtomicLong answered = new AtomicLong();
  private volatile boolean running = true;

  private RequestStream(HttpApi api, int threads) {
    for (int t = 0; t < threads; t++) {
      int first = t;
      Thread sender =
          new Thread(
              () -> {
                for (int i = first; running; i += threads) {
                  api.post("/v1/completions", body(i));
                  answered.incrementAndGet();
                }
              },
              "dashboard-requests-" + t);
      sender.setDaemon(true);
      senders.add(sender);
    }
    senders.forEach(Thread::start);
  }

  /** Starts {@code threads} senders against the router of {@code api}. */
  static RequestStream start(HttpApi api, int threads) {
    return new RequestStream(api, threads);
  }

  /** Requests answered so far, whatever the answer. */
  long answered() {
    return answered.get();
  }

  /** Stops sending and waits for the requests in flight to be answered. */
  @Override
  public void close() {
    running = false;
    try {
      for (Thread sender : senders) {
        sender.join();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while the last requests were answered", e);
    }
  }

  /** Prompts of one to six blocks of sixteen tokens and some more, so most leave a lease. */
  private static String body(int i) {
    String prompt = ("request " + i + " flows past the dashboard; ").repeat(1 + i % 4);
    return JsonMapper.shared()
        .writeValueAsString(Map.of("model", "kvbridge-toy", "prompt", prompt, "max_tokens", 3));
  }
}
