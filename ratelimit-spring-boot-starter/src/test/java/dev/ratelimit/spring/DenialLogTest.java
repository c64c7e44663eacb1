package dev.ratelimit.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.Decision;
import dev.ratelimit.ManualClock;
import dev.ratelimit.Policy;
import dev.ratelimit.annotation.RateLimitExceededException;
import dev.ratelimit.annotation.RateLimited;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** {@code ratelimit.log-denials}: off by default, one line per denial, no key unless asked, capped. */
class DenialLogTest {
  private static final Logger LOGGER = Logger.getLogger(DenialLog.LOGGER);

  private final List<LogRecord> records = new CopyOnWriteArrayList<>();
  private final Handler capture = new Handler() {
    @Override
    public void publish(LogRecord record) {
      records.add(record);
    }

    @Override
    public void flush() {}

    @Override
    public void close() {}
  };

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, AopAutoConfiguration.class))
      .withUserConfiguration(Beans.class);

  @BeforeEach
  void listen() {
    LOGGER.addHandler(capture);
  }

  @AfterEach
  void stopListening() {
    LOGGER.removeHandler(capture);
  }

  @Configuration(proxyBeanMethods = false)
  static class Beans {
    @Bean
    InstantSource clock() {
      return ManualClock.at(Instant.ofEpochSecond(1_700_000_000L));
    }

    @Bean
    Service service() {
      return new Service();
    }
  }

  public static class Service {
    @RateLimited(key = "#user", limit = 1, window = "1m", name = "one-a-minute") // GCRA: retry after 60 s
    public String call(String user) {
      return "ok";
    }
  }

  private static void deny(Service service, String user, int times) {
    for (int i = 0; i < times; i++) {
      assertThatThrownBy(() -> service.call(user)).isInstanceOf(RateLimitExceededException.class);
    }
  }

  private List<String> lines() {
    return records.stream().map(LogRecord::getMessage).toList();
  }

  @Test
  void nothingIsLoggedByDefault() {
    runner.run(context -> {
      assertThat(context).doesNotHaveBean(DenialLog.class);
      Service service = context.getBean(Service.class);
      service.call("alice");
      deny(service, "alice", 3);
      assertThat(records).isEmpty();
    });
  }

  @Test
  void oneLinePerDenialWithPolicyOutcomeAndRetryAfterButNoKey() {
    runner.withPropertyValues("ratelimit.log-denials=true").run(context -> {
      Service service = context.getBean(Service.class);
      service.call("alice");
      deny(service, "alice", 2);
      assertThat(lines()).containsExactly(
          "rate limit denied: source=" + Service.class.getName() + ".call policy=one-a-minute outcome=denied retryAfterMs=60000",
          "rate limit denied: source=" + Service.class.getName() + ".call policy=one-a-minute outcome=denied retryAfterMs=60000");
      assertThat(records).allSatisfy(r -> assertThat(r.getLevel()).isEqualTo(Level.INFO));
      assertThat(String.join("\n", lines())).doesNotContain("alice");
    });
  }

  @Test
  void theKeyOnlyWhenAskedFor() {
    runner.withPropertyValues("ratelimit.log-denials=true", "ratelimit.log-denials-include-key=true").run(context -> {
      Service service = context.getBean(Service.class);
      service.call("bob \"the\" builder\n");
      deny(service, "bob \"the\" builder\n", 1);
      assertThat(lines()).singleElement().asString()
          .endsWith(" retryAfterMs=60000 key=\"bob \\\"the\\\" builder?\"");
    });
  }

  @Test
  void theCapComesFromTheProperty() {
    runner.withPropertyValues("ratelimit.log-denials=true", "ratelimit.log-denials-max-per-second=3")
        .run(context -> assertThat(context.getBean(DenialLog.class).maxPerSecond()).isEqualTo(3));
    runner.withPropertyValues("ratelimit.log-denials=true", "ratelimit.log-denials-max-per-second=0")
        .run(context -> assertThat(context).hasFailed().getFailure()
            .hasStackTraceContaining("ratelimit.log-denials-max-per-second must be from 1 to 1048575, was 0"));
  }

  /** At most N lines in any second; the next line says how many were left out. */
  @Test
  void atMostNLinesASecond() {
    AtomicLong nanos = new AtomicLong(5_000_000_000L);
    DenialLog log = new DenialLog(false, 3, nanos::get);
    Decision denied = Decision.denied(Policy.of(1, Duration.ofSeconds(1)).withName("p"), 0, 1_500, 2_000);
    for (int i = 0; i < 10; i++) {
      log.denied("filter", denied, "k");
    }
    assertThat(lines()).hasSize(3).allSatisfy(
        line -> assertThat(line).isEqualTo("rate limit denied: source=filter policy=p outcome=denied retryAfterMs=2"));
    nanos.addAndGet(999_999_999L); // the same second still
    log.denied("filter", denied, "k");
    assertThat(lines()).hasSize(3);
    nanos.addAndGet(1L); // the next second
    for (int i = 0; i < 10; i++) {
      log.denied("filter", denied, "k");
    }
    assertThat(lines()).hasSize(6);
    assertThat(lines().get(3)).endsWith(" notLogged=8");
    assertThat(lines().get(4)).doesNotContain("notLogged");
  }

  @Test
  void aFailureModeDenialSaysSo() {
    DenialLog log = new DenialLog(true, 10, () -> 0L);
    Policy p = Policy.of(1, Duration.ofSeconds(1)).withName("p");
    log.denied("filter", new Decision(p, false, -1, Duration.ofSeconds(1), Duration.ofSeconds(1), Duration.ZERO), null);
    assertThat(lines()).containsExactly("rate limit denied: source=filter policy=p outcome=failure_denied retryAfterMs=1000");
  }
}
