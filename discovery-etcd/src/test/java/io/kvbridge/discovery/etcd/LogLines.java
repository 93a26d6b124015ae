package io.kvbridge.discovery.etcd;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;

/**
 * The lines {@link EtcdDiscovery} logs while this is open, as a person reading the log sees them.
 */
final class LogLines extends Handler implements AutoCloseable {

  private final Logger logger = Logger.getLogger(EtcdDiscovery.class.getName());
  private final SimpleFormatter formatter = new SimpleFormatter();
  private final List<LogRecord> records = new CopyOnWriteArrayList<>();

  LogLines() {
    logger.addHandler(this);
  }

  /** The formatted messages logged at {@code level} that contain {@code text}. */
  List<String> at(Level level, String text) {
    return records.stream()
        .filter(r -> r.getLevel().equals(level))
        .map(formatter::formatMessage)
        .filter(m -> m.contains(text))
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
  }
}
