package io.kvbridge.wire;

import io.kvbridge.net.DropReason;
import io.kvbridge.net.HandshakeAddress;
import io.kvbridge.observe.EnumCounters;
import io.kvbridge.wire.HandshakeChannel.Conversation;
import io.kvbridge.wire.HandshakeChannel.Reply;
import io.kvbridge.wire.HandshakeChannel.Responder;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
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
 * The TCP handshake server: greets each connection, then reads each frame of the consumer's, has it
 * replied to, writes the reply, until the conversation's last reply is written; then closes.
 *
 * <p>Threads. One <em>I/O thread</em> runs a selector and does every accept, read, write and close
 * without blocking, so a peer that connects and says nothing, or sends a byte now and then, costs
 * this server a socket and memory for the bytes it sent, never a thread. It opens each connection's
 * {@link Conversation} and sends its greeting as it accepts. Only a frame that has fully arrived is
 * handed to a small fixed pool of <em>worker threads</em>, which call {@link Conversation#reply}
 * (it may decrypt, decode, check and load transport metadata) and pass the reply back to the I/O
 * thread through a queue; the I/O thread writes it. ServerConnection state is confined to the I/O
 * thread; a worker sees only the conversation and the frame it was handed. {@link #address()},
 * {@link #droppedConnections()} and {@link #close()} may be called from any thread.
 *
 * <p>Limits, so that a flood cannot keep a real consumer out:
 *
 * <ul>
 *   <li>every connection has a deadline from accept until its last reply is written, and a shorter
 *       one until the consumer has <em>proved</em> itself (the conversation says so: a request that
 *       authenticated, or without a secret a well-formed request); a connection past either is
 *       closed whatever it is doing, except that the shorter one waits while a worker holds it.
 *       Both deadlines are the same length for every connection, so accept order is deadline order
 *       and finding the expired ones costs O(1) per connection;
 *   <li>connections are capped per remote IP address and in all. When a cap is reached, the oldest
 *       connection that has proved nothing and is waiting on its peer is closed ({@link
 *       DropReason#EVICTED}) to make room for the new one; only when there is none is the new one
 *       refused. A newcomer therefore always gets in unless every place holds a consumer that
 *       proved itself or is being answered;
 *   <li>some places are kept for addresses this server served before (a conversation that ended
 *       accepted): others may fill only the rest;
 *   <li>a connection that announces a frame longer than {@link Handshake#MAX_FRAME_BYTES} (or
 *       negative) is closed as soon as its length has arrived.
 * </ul>
 *
 * <p>Each drop is counted by reason and logged at DEBUG only, so a flood costs no log volume. The
 * worker queue is as long as the total cap, and each connection hands over at most one frame at a
 * time, so it never refuses one.
 */
final class TcpHandshakeServer implements HandshakeChannel.Server {

  private static final System.Logger LOG = System.getLogger(TcpHandshakeServer.class.getName());
  private static final int WORKER_THREADS = 4;
  private static final long ACCEPT_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

  private final HandshakeAddress address;
  private final Responder responder;
  private final TcpHandshakeChannel.Limits limits;
  private final long deadlineNanos;
  private final long proofDeadlineNanos;
  private final ServerSocketChannel listener;
  private final Selector selector;
  private final SelectionKey acceptKey;
  private final ThreadPoolExecutor workers;
  private final Thread ioThread;
  private final EnumCounters<DropReason> dropped = new EnumCounters<>(DropReason.class);
  private final ConcurrentLinkedQueue<Replied> replied = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean closing = new AtomicBoolean();

  // Confined to the I/O thread.
  private final ArrayDeque<ServerConnection> byDeadline = new ArrayDeque<>();
  private final ConnectionPlaces places;
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
    this.proofDeadlineNanos = TcpHandshakeChannel.saturatedNanos(limits.proofDeadline());
    this.places = new ConnectionPlaces(limits);
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
        deliverReplies();
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
    wait = sooner(wait, expireProofDeadlines(now));
    while (!byDeadline.isEmpty()) {
      ServerConnection c = byDeadline.peekFirst();
      if (c.closed) {
        byDeadline.pollFirst();
        continue;
      }
      long left = c.deadline - now;
      if (left > 0) {
        return sooner(wait, TcpHandshakeChannel.ceilMillis(left));
      }
      byDeadline.pollFirst();
      drop(c, DropReason.DEADLINE_PASSED, "in state " + c.state);
    }
    return wait;
  }

  /**
   * Closes the connections that have not proved themselves by their proof deadline; one a worker
   * holds is left to its reply, and those behind it wait for the next round.
   *
   * @return how long until the next proof deadline, 0 if none is pending
   */
  private long expireProofDeadlines(long now) {
    for (Optional<ServerConnection> first = places.oldestUnproven();
        first.isPresent();
        first = places.oldestUnproven()) {
      ServerConnection c = first.get();
      long left = c.proofDeadline - now;
      if (left > 0) {
        return TcpHandshakeChannel.ceilMillis(left);
      }
      if (c.state == ServerConnection.State.REPLYING) {
        // Its worker's reply decides; look again soon.
        return 1;
      }
      places.forgetOldestUnproven();
      drop(c, DropReason.DEADLINE_PASSED, "before it proved itself, in state " + c.state);
    }
    return 0;
  }

  private static long sooner(long a, long b) {
    if (a == 0) {
      return b;
    }
    return b == 0 ? a : Math.min(a, b);
  }

  /** One connection's bug must not stop the server for every other. */
  private void readyGuarded(SelectionKey key) {
    try {
      ready(key);
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "handling a handshake connection failed", e);
      if (key.attachment() instanceof ServerConnection c) {
        close(c);
      }
    }
  }

  private void ready(SelectionKey key) {
    if (key == acceptKey) {
      acceptAll();
      return;
    }
    ServerConnection c = (ServerConnection) key.attachment();
    try {
      if (key.isReadable()) {
        readFrame(c);
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
    ConnectionPlaces.Admission admission = places.admission(peer);
    if (admission instanceof ConnectionPlaces.Admission.Refuse refused) {
      refuse(channel, peer, refused.cap());
      return;
    }
    for (ServerConnection evicted : ((ConnectionPlaces.Admission.Admit) admission).evict()) {
      drop(evicted, DropReason.EVICTED, "to make room for a newer connection");
    }
    long now = System.nanoTime();
    ServerConnection c =
        new ServerConnection(
            channel, peer, now + deadlineNanos, now + proofDeadlineNanos, places.isKnown(peer));
    places.opened(c);
    byDeadline.addLast(c);
    try {
      channel.configureBlocking(false);
      channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
      c.key = channel.register(selector, 0, c);
      c.conversation = responder.open();
      c.out = HandshakeFrames.encode(c.conversation.greeting());
      writeOut(c);
    } catch (IOException e) {
      closeAfter(c, e);
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "greeting a handshake connection failed", e);
      close(c);
    }
  }

  private void readFrame(ServerConnection c) throws IOException {
    if (!c.in.readFrom(c.channel)) {
      return;
    }
    byte[] frame = c.in.payload();
    Conversation conversation = c.conversation;
    c.in = null;
    c.state = ServerConnection.State.REPLYING;
    c.rounds++;
    c.key.interestOps(0);
    try {
      workers.execute(
          () -> {
            replied.add(new Replied(c, reply(conversation, frame)));
            selector.wakeup();
          });
    } catch (RejectedExecutionException closing) {
      close(c);
    }
  }

  /** On a worker thread. */
  private Optional<Reply> reply(Conversation conversation, byte[] frame) {
    try {
      return Optional.of(conversation.reply(frame));
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "answering a handshake failed", e);
      return Optional.empty();
    }
  }

  private void deliverReplies() {
    for (Replied r = replied.poll(); r != null; r = replied.poll()) {
      ServerConnection c = r.connection();
      if (c.closed) {
        continue;
      }
      if (r.reply().isEmpty()) {
        close(c);
        continue;
      }
      Reply reply = r.reply().get();
      if (reply.proven()) {
        c.proven = true;
      }
      if (reply.served()) {
        places.served(c.peer);
      }
      c.state = ServerConnection.State.WRITING;
      c.lastOut = reply.last() || c.rounds >= HandshakeChannel.MAX_ROUNDS;
      c.out = HandshakeFrames.encode(reply.frame());
      try {
        writeOut(c);
      } catch (IOException e) {
        closeAfter(c, e);
      }
    }
  }

  private void writeOut(ServerConnection c) throws IOException {
    c.channel.write(c.out);
    if (c.out.hasRemaining()) {
      c.key.interestOps(SelectionKey.OP_WRITE);
      return;
    }
    c.out = null;
    if (c.lastOut) {
      close(c);
      return;
    }
    c.state = ServerConnection.State.AWAITING;
    c.in = new HandshakeFrames.Reader();
    c.key.interestOps(SelectionKey.OP_READ);
  }

  private void drop(ServerConnection c, DropReason reason, String detail) {
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

  private void closeAfter(ServerConnection c, IOException e) {
    LOG.log(Level.DEBUG, () -> "handshake connection from " + c.peer + " failed: " + e);
    close(c);
  }

  private void close(ServerConnection c) {
    if (c.closed) {
      return;
    }
    c.closed = true;
    c.conversation = null;
    c.in = null;
    c.out = null;
    places.closed(c);
    closeQuietly(c.channel);
  }

  private void closeEverything() {
    for (SelectionKey key : selector.keys()) {
      closeQuietly(key.channel());
    }
    for (ServerConnection c : byDeadline) {
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

  /** A worker's reply for a connection, or empty if the conversation failed. */
  private record Replied(ServerConnection connection, Optional<Reply> reply) {}
}
