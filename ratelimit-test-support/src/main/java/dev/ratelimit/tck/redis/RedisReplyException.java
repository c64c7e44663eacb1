package dev.ratelimit.tck.redis;

/**
 * An error reply ({@code -ERR ...}, {@code -MOVED ...}, {@code -NOSCRIPT ...}) from Redis. The
 * message is the reply's text without the leading {@code -}; {@link #code()} is its first word.
 *
 * <p>Thrown by {@link RedisServer#command(Object...)} when the whole reply is an error. An error
 * nested inside an array reply (an element of {@code EXEC}'s answer, or a Lua table holding
 * {@code redis.error_reply(..)}) is not thrown: it is an element of the returned list, so the rest
 * of the array is still read.
 */
public final class RedisReplyException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** An error reply whose text (without the leading {@code -}) is {@code message}. */
  public RedisReplyException(String message) {
    super(message);
  }

  /** The error's code: the first word of the message, such as {@code ERR} or {@code MOVED}. */
  public String code() {
    String m = getMessage();
    int space = m.indexOf(' ');
    return space < 0 ? m : m.substring(0, space);
  }
}
