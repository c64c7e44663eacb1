package dev.ratelimit.bench.frontdoor;

import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/** The endpoint, not annotated: what the filters (ours, Bucket4j's) and the no-limiter row serve. */
@RestController
@ConditionalOnProperty(name = "bench.annotation", havingValue = "false", matchIfMissing = true)
class WorkController {
  @GetMapping(path = "/work", produces = MediaType.TEXT_PLAIN_VALUE)
  String work(@RequestParam String user) {
    return "ok";
  }
}
