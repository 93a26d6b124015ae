package io.kvbridge.wire;

import io.kvbridge.observe.EnumCounters;
import io.kvbridge.wire.HandshakeChannel.DropReason;
import io.kvbridge.wire.HandshakeChannel.Responder;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The TCP handshake server: greets each connection, reads its request, has it answered, writes the
 * answer, closes.
 *
 * <p>Threads. One <em>I/O thread</em> runs a selector and does every accept, read, write and close
 * without blocking, so a peer that connects and says nothing, or sends a byte now and then, costs
 * this server a socket and memory for the bytes it sent, never a thread. It calls {@link
 * Responder#greet()} as it accepts. Only a request frame that has fully arrived is handed to a
 * small fixed pool of <em>worker threads</em>, which call {@link Responder#answer} (it may decode,
 * check and load transport metadata) and pass the answer back to the I/O thread through a queue;
 * the I/O thread writes it. Connection state is confined to the I/O thread; a worker sees only the
 * greeting and request it was handed. {@link #address()}, {@link #droppedConnections()} and {@link
 * #close()} may be called from any thread.
 *
 * <p>Limits. Every connection has a deadline from accept until its answer is written; a connection
 * past it is closed whatever it is doing, reading, waiting for a worker, or writing to a peer that
 * does not read. Connections are kept in accept order, which is deadline order because every
 * deadline is the same length, so finding the expired ones costs O(1) per connection. A connection
 * beyond the cap for its remote IP address or the cap for the server is closed as it is accepted,
 * and one that announces a frame longer than {@link Handshake#MAX_FRAME_BYTES} (or negative) as
 * soon as its length has arrived. Each drop is counted by reason and logged at DEBUG only, so a
 * flood costs no log volume. The worker queue is as long as the total cap, and each connection
 * hands over at most one request, so it never refuses one.
 */
final class TcpHandshakeServer implements HandshakeChannel.Server {

  private static final System.Logger LOG = System.getLogger(TcpHandshakeServer.class.getName());
  private static final int WORKER_THREADS = 4;
  private static final long ACCEPT_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

  private final HandshakeAddress address;
  private final Responder responder;
  private final TcpHandshakeChannel.Limits limits;
  private final long deadlineNanos;
  private final ServerSocketChannel listener;
  private final Selector selector;
  private final SelectionKey acceptKey;
  private final ThreadPoolExecutor workers;
  private final Thread ioThread;
  private final EnumCounters<DropReason> dropped = new EnumCounters<>(DropReason.class);
  private final ConcurrentLinkedQueue<Answered> answered = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean closing = new AtomicBoolean();

  // Confined to the I/O thread.
  private final ArrayDeque<Connection> byDeadline = new ArrayDeque<>();
  private final Map<InetAddress, Integer> openByAddress = new HashMap<>();
  private int open;
  private long acceptPausedUntil;
  private boolean acceptPaused;

  private TcpHandshakeServer(
      HandshakeAddress address,
      String engineId,
      Responder responder,
      TcpHandshakeChannel.Limits limits,
      ServerSocketChannel listener,
      Selector selector)
      throws IOException {
    this.address = address;
    this.responder = responder;
    this.limits = limits;
    this.deadlineNanos = TcpHandshakeChannel.saturatedNanos(limits.connectionDeadline());
    this.listener = listener;
    this.selector = selector;
    this.acceptKey = listener.register(selector, SelectionKey.OP_ACCEPT);
    AtomicInteger workerCount = new AtomicInteger();
    this.workers =
        new ThreadPoolExecutor(
            WORKER_THREADS,
            WORKER_THREADS,
            0,
            TimeUnit.MILLISECONDS,
            // Linked: bounded by the cap without allocating a slot for every connection it allows.
            new LinkedBlockingQueue<>(limits.total()),
            r -> {
              Thread t =
                  new Thread(
                      r, "kvbridge-handshake-" + engineId + "-" + workerCount.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    this.ioThread = new Thread(this::run, "kvbridge-handshake-io-" + engineId);
    ioThread.setDaemon(true);
  }

  /** Binds {@code bind} and starts the I/O thread. */
  static TcpHandshakeServer start(
      InetSocketAddress bind,
      String engineId,
      Responder responder,
      TcpHandshakeChannel.Limits limits)
      throws IOException {
    ServerSocketChannel listener = ServerSocketChannel.open();
    Selector selector = null;
    try {
      listener.setOption(StandardSocketOptions.SO_REUSEADDR, true);
      // A backlog as deep as the cap, so a burst of connections waits in the kernel for the I/O
      // thread instead of having its SYNs dropped and retried a second later.
      listener.bind(bind, limits.total());
      listener.configureBlocking(false);
      selector = Selector.open();
      InetSocketAddress bound = (InetSocketAddress) listener.getLocalAddress();
      String host = bind.getAddress().isAnyLocalAddress() ? "127.0.0.1" : bind.getHostString();
      TcpHandshakeServer server =
          new TcpHandshakeServer(
              new HandshakeAddress.Tcp(host, bound.getPort()),
              engineId,
              responder,
              limits,
              listener,
              selector);
      server.ioThread.start();
      return server;
    } catch (IOException | RuntimeException e) {
      if (selector != null) {
        selector.close();
      }
      listener.close();
      throw e;
    }
  }

  @Override
  public HandshakeAddress address() {
    return address;
  }

  @Override
  public Map<DropReason, Long> droppedConnections() {
    return dropped.snapshot();
  }

  @Override
  public void close() {
    if (!closing.compareAndSet(false, true)) {
      return;
    }
    selector.wakeup();
    if (Thread.currentThread() == ioThread) {
      return;
    }
    try {
      ioThread.join();
      if (!workers.awaitTermination(1, TimeUnit.SECONDS)) {
        LOG.log(Level.DEBUG, "a handshake worker of {0} is still answering after close", address);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void run() {
    try {
      while (!closing.get()) {
        long waitMillis = expire(System.nanoTime());
        selector.select(waitMillis);
        for (SelectionKey key : selector.selectedKeys()) {
          if (key.isValid()) {
            readyGuarded(key);
          }
        }
        selector.selectedKeys().clear();
        deliverAnswers();
      }
    } catch (IOException | RuntimeException e) {
      LOG.log(Level.ERROR, "handshake server at " + address + " stopped", e);
    } finally {
      closeEverything();
    }
  }

  /**
   * Closes the connections whose deadline has passed and resumes accepting after a back-off.
   *
   * @return how long the selector may wait before this must run again, 0 for as long as it likes
   */
  private long expire(long now) {
    long wait = 0;
    if (acceptPaused) {
      long left = acceptPausedUntil - now;
      if (left <= 0) {
        acceptPaused = false;
        acceptKey.interestOps(SelectionKey.OP_ACCEPT);
      } else {
        wait = TcpHandshakeChannel.ceilMillis(left);
      }
    }
    while (!byDeadline.isEmpty()) {
      Connection c = byDeadline.peekFirst();
      if (c.closed) {
        byDeadline.pollFirst();
        continue;
      }
      long left = c.deadline - now;
      if (left > 0) {
        long millis = TcpHandshakeChannel.ceilMillis(left);
        return wait == 0 ? millis : Math.min(wait, millis);
      }
      byDeadline.pollFirst();
      drop(c, DropReason.DEADLINE_PASSED, "in state " + c.state);
    }
    return wait;
  }

  /** One connection's bug must not stop the server for every other. */
  private void readyGuarded(SelectionKey key) {
    try {
      ready(key);
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "handling a handshake connection failed", e);
      if (key.attachment() instanceof Connection c) {
        close(c);
      }
    }
  }

  private void ready(SelectionKey key) {
    if (key == acceptKey) {
      acceptAll();
      return;
    }
    Connection c = (Connection) key.attachment();
    try {
      if (key.isReadable()) {
        readRequest(c);
      } else if (key.isWritable()) {
        writeOut(c);
      }
    } catch (HandshakeFrames.RefusedFrameException e) {
      drop(c, DropReason.FRAME_REFUSED, e.getMessage());
    } catch (IOException e) {
      closeAfter(c, e);
    }
  }

  private void acceptAll() {
    while (true) {
      SocketChannel channel;
      try {
        channel = listener.accept();
      } catch (IOException e) {
        // Out of file descriptors, typically: accepting again at once would spin.
        LOG.log(Level.DEBUG, "accepting a handshake connection failed; pausing", e);
        acceptPaused = true;
        acceptPausedUntil = System.nanoTime() + ACCEPT_BACKOFF_NANOS;
        acceptKey.interestOps(0);
        return;
      }
      if (channel == null) {
        return;
      }
      admit(channel);
    }
  }

  private void admit(SocketChannel channel) {
    InetAddress peer;
    try {
      peer = ((InetSocketAddress) channel.getRemoteAddress()).getAddress();
    } catch (IOException e) {
      closeQuietly(channel);
      return;
    }
    if (open >= limits.total()) {
      refuse(channel, peer, DropReason.TOTAL_LIMIT);
      return;
    }
    if (openByAddress.getOrDefault(peer, 0) >= limits.perAddress()) {
      refuse(channel, peer, DropReason.ADDRESS_LIMIT);
      return;
    }
    Connection c = new Connection(channel, peer, System.nanoTime() + deadlineNanos);
    open++;
    openByAddress.merge(peer, 1, Integer::sum);
    byDeadline.addLast(c);
    try {
      channel.configureBlocking(false);
      channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
      c.key = channel.register(selector, 0, c);
      c.greeting = responder.greet();
      c.out = HandshakeFrames.encode(c.greeting);
      writeOut(c);
    } catch (IOException e) {
      closeAfter(c, e);
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "greeting a handshake connection failed", e);
      close(c);
    }
  }

  private void readRequest(Connection c) throws IOException {
    if (!c.request.readFrom(c.channel)) {
      return;
    }
    byte[] request = c.request.payload();
    byte[] greeting = c.greeting;
    c.request = null;
    c.state = State.ANSWERING;
    c.key.interestOps(0);
    try {
      workers.execute(
          () -> {
            answered.add(new Answered(c, answer(greeting, request)));
            selector.wakeup();
          });
    } catch (RejectedExecutionException closing) {
      close(c);
    }
  }

  /** On a worker thread. */
  private Optional<byte[]> answer(byte[] greeting, byte[] request) {
    try {
      return Optional.of(responder.answer(greeting, request));
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "answering a handshake failed", e);
      return Optional.empty();
    }
  }

  private void deliverAnswers() {
    for (Answered a = answered.poll(); a != null; a = answered.poll()) {
      Connection c = a.connection();
      if (c.closed) {
        continue;
      }
      if (a.answer().isEmpty()) {
        close(c);
        continue;
      }
      c.state = State.ANSWER;
      c.out = HandshakeFrames.encode(a.answer().get());
      try {
        writeOut(c);
      } catch (IOException e) {
        closeAfter(c, e);
      }
    }
  }

  private void writeOut(Connection c) throws IOException {
    c.channel.write(c.out);
    if (c.out.hasRemaining()) {
      c.key.interestOps(SelectionKey.OP_WRITE);
      return;
    }
    c.out = null;
    if (c.state == State.GREETING) {
      c.state = State.REQUEST;
      c.request = new HandshakeFrames.Reader();
      c.key.interestOps(SelectionKey.OP_READ);
    } else {
      close(c);
    }
  }

  private void drop(Connection c, DropReason reason, String detail) {
    dropped.increment(reason);
    LOG.log(
        Level.DEBUG,
        () -> "handshake connection from " + c.peer + " dropped: " + reason + ", " + detail);
    close(c);
  }

  private void refuse(SocketChannel channel, InetAddress peer, DropReason reason) {
    dropped.increment(reason);
    LOG.log(Level.DEBUG, () -> "handshake connection from " + peer + " refused: " + reason);
    closeQuietly(channel);
  }

  private void closeAfter(Connection c, IOException e) {
    LOG.log(Level.DEBUG, () -> "handshake connection from " + c.peer + " failed: " + e);
    close(c);
  }

  private void close(Connection c) {
    if (c.closed) {
      return;
    }
    c.closed = true;
    c.greeting = null;
    c.request = null;
    c.out = null;
    open--;
    openByAddress.computeIfPresent(c.peer, (peer, n) -> n == 1 ? null : n - 1);
    closeQuietly(c.channel);
  }

  private void closeEverything() {
    for (SelectionKey key : selector.keys()) {
      closeQuietly(key.channel());
    }
    for (Connection c : byDeadline) {
      closeQuietly(c.channel);
    }
    closeQuietly(listener);
    closeQuietly(selector);
    workers.shutdownNow();
  }

  private static void closeQuietly(AutoCloseable closeable) {
    try {
      closeable.close();
    } catch (Exception e) {
      LOG.log(Level.DEBUG, "closing a handshake socket failed", e);
    }
  }

  private enum State {
    GREETING,
    REQUEST,
    ANSWERING,
    ANSWER
  }

  /** One accepted connection; confined to the I/O thread. */
  private static final class Connection {
    final SocketChannel channel;
    final InetAddress peer;
    final long deadline;
    SelectionKey key;
    State state = State.GREETING;
    byte[] greeting;
    HandshakeFrames.Reader request;
    ByteBuffer out;
    boolean closed;

    Connection(SocketChannel channel, InetAddress peer, long deadline) {
      this.channel = channel;
      this.peer = peer;
      this.deadline = deadline;
    }
  }

  /** A worker's answer for a connection, or empty if the responder failed. */
  private record Answered(Connection connection, Optional<byte[]> answer) {}
}
