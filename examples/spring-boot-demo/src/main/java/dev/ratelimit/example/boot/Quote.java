package dev.ratelimit.example.boot;

import java.math.BigDecimal;

/** A price quote, as the partner API returns it. */
public record Quote(String symbol, BigDecimal price) {}
