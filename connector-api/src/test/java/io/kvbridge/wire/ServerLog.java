package io.kvbridge.wire;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;

/**
 * What {@link TcpHandshakeServer} logs while this is open, DEBUG (FINE) included, kept off the
 * console. The JDK's platform logging writes through java.util.logging when nothing else is
 * installed, as in these tests.
 */
final class ServerLog extends Handler implements AutoCloseable {

  private final Logger logger = Logger.getLogger(TcpHandshakeServer.class.getName());
  private final Level levelBefore = logger.getLevel();
  private final boolean parentHandlersBefore = logger.getUseParentHandlers();
  private final SimpleFormatter formatter = new SimpleFormatter();
  private final List<LogRecord> records = new CopyOnWriteArrayList<>();

  ServerLog() {
    logger.setLevel(Level.ALL);
    logger.setUseParentHandlers(false);
    logger.addHandler(this);
  }

  /** The formatted messages logged at {@code level}. */
  List<String> at(Level level) {
    return records.stream()
        .filter(r -> r.getLevel().equals(level))
        .map(formatter::formatMessage)
        .toList();
  }

  /** The formatted messages logged above {@code level}. */
  List<String> above(Level level) {
    return records.stream()
        .filter(r -> r.getLevel().intValue() > level.intValue())
        .map(formatter::formatMessage)
        .toList();
  }

  /** The exceptions logged at {@code level}. */
  List<Throwable> thrownAt(Level level) {
    return records.stream()
        .filter(r -> r.getLevel().equals(level) && r.getThrown() != null)
        .map(LogRecord::getThrown)
        .toList();
  }

  @Override
  public void publish(LogRecord record) {
    records.add(record);
  }

  @Override
  public void flush() {}

  @Override
  public void close() {
    logger.removeHandler(this);
    logger.setUseParentHandlers(parentHandlersBefore);
    logger.setLevel(levelBefore);
  }
}
