package dev.ratelimit.internal.http;

import java.util.AbstractMap;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;

/** Headers by name, case-insensitive, first value; read-only, read from the server's API on use. */
final class HeaderMap extends AbstractMap<String, String> {
  private final Function<String, String> header;
  private final Supplier<? extends Iterable<String>> names;

  HeaderMap(Function<String, String> header, Supplier<? extends Iterable<String>> names) {
    this.header = header;
    this.names = names;
  }

  @Override
  public String get(Object name) {
    return name instanceof String s ? header.apply(s) : null;
  }

  @Override
  public boolean containsKey(Object name) {
    return get(name) != null;
  }

  @Override
  public Set<Entry<String, String>> entrySet() {
    Map<String, String> all = new LinkedHashMap<>();
    for (String name : names.get()) {
      all.putIfAbsent(name, header.apply(name));
    }
    return Collections.unmodifiableMap(all).entrySet();
  }
}
