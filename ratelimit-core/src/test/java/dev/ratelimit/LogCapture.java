package dev.ratelimit;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * The limiter's log lines (System.Logger, here backed by java.util.logging) captured instead of
 * printed, while open; or those of another class's logger.
 */
public final class LogCapture extends Handler implements AutoCloseable {
  private final Logger logger; // held: JUL keeps loggers weakly
  private final boolean parentHandlers;
  final List<LogRecord> records = Collections.synchronizedList(new ArrayList<>());

  LogCapture() {
    this(RateLimiter.class);
  }

  /** Captures the lines of the logger named after {@code logging}, as {@code System.getLogger} names it. */
  public LogCapture(Class<?> logging) {
    logger = Logger.getLogger(logging.getName());
    parentHandlers = logger.getUseParentHandlers();
    logger.setUseParentHandlers(false);
    logger.addHandler(this);
  }

  /** The messages captured at {@code level}, in order. */
  public List<String> lines(Level level) {
    synchronized (records) {
      return records.stream().filter(r -> r.getLevel().equals(level)).map(LogRecord::getMessage).toList();
    }
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
    logger.setUseParentHandlers(parentHandlers);
  }
}
