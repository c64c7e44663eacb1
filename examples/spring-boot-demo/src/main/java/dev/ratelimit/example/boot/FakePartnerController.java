package dev.ratelimit.example.boot;

import java.math.BigDecimal;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/**
 * Stands in for the partner's quote API so that the demo runs on its own; point
 * {@code demo.partner.base-url} at a real API instead.
 */
@RestController
class FakePartnerController {

  /** Every symbol costs 42. */
  @GetMapping("/fake-partner/quotes/{symbol}")
  Quote quote(@PathVariable String symbol) {
    return new Quote(symbol, new BigDecimal("42.00"));
  }
}
