package dev.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Policy;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class RedisKeysTest {
  private final RedisKeys keys = new RedisKeys("rl");
  private static final long NOW = 1_700_000_000_000_000L;

  @Test
  void escapingIsInjectiveOnTrickyKeys() {
    List<String> raw = List.of("a:b", "a%3Ab", "a%003Ab", "{a}", "%007Ba%007D", "a b", "a\tb", "a\u0000b",
        "#abc", "%0023abc", "ключ", "🔑", "\uD83D", "\uDD11", "a}", "a{", ":", "::", "%", "%%");
    Set<String> escaped = new HashSet<>();
    for (String r : raw) {
      assertThat(escaped.add(RedisKeys.part(r))).as("escaped form of %s is unique", r).isTrue();
      assertThat(RedisKeys.part(r)).doesNotContain("{", "}", ":", " ");
    }
    assertThat(RedisKeys.part("user-42")).isEqualTo("user-42");
    assertThat(RedisKeys.part("a:b")).isEqualTo("a%003Ab");
  }

  @Test
  void longKeysAreHashedAndStillDistinct() {
    String a = "x".repeat(10_240);
    String b = "x".repeat(10_239) + "y";
    assertThat(RedisKeys.part(a)).startsWith("#").hasSize(65).isNotEqualTo(RedisKeys.part(b));
    assertThat(RedisKeys.part("x".repeat(RedisKeys.MAX_PART))).isEqualTo("x".repeat(RedisKeys.MAX_PART));
  }

  @Test
  void longKeysWithALoneSurrogateDoNotShareAHash() throws Exception {
    String lone = "a".repeat(RedisKeys.MAX_PART) + "\uD800";
    String question = "a".repeat(RedisKeys.MAX_PART) + "?"; // what UTF-8 encoding makes of the lone surrogate
    String escapedLone = "a".repeat(RedisKeys.MAX_PART) + "%D800"; // the lone one's escaped form, as a key
    Set<String> parts = new HashSet<>(List.of(RedisKeys.part(lone), RedisKeys.part(question), RedisKeys.part(escapedLone)));
    assertThat(parts).hasSize(3);
    assertThat(RedisKeys.part(lone)).startsWith("#u").hasSize(66);
    // a well-formed long key keeps the hash it always had: instances of two versions share its state
    String pair = "k".repeat(RedisKeys.MAX_PART) + "\uD83D\uDD11";
    byte[] digest = MessageDigest.getInstance("SHA-256")
        .digest(pair.getBytes(StandardCharsets.UTF_8));
    assertThat(RedisKeys.part(pair)).isEqualTo("#" + HexFormat.of().formatHex(digest));
  }

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void everyKeyOfACheckSharesTheUserKeyAsHashTag(Algorithm algorithm) {
    Policy p = Policy.of(10, Duration.ofSeconds(10), algorithm).withName("api:v1");
    for (Object key : keys.of("{user}:42", p)) {
      String k = (String) key;
      assertThat(k).startsWith("rl:{%007Buser%007D%003A42}:api%003Av1:" + algorithm.shortName());
      String tag = k.substring(k.indexOf('{') + 1, k.indexOf('}'));
      assertThat(tag).isEqualTo("%007Buser%007D%003A42");
    }
  }

  /**
   * The window algorithms keep their newest window in one key, whatever the clock says, so that a
   * check stamped before it (a clock stepped back) finds it.
   */
  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void everyPolicyKeepsItsStateInOneKeyWhateverTheClock(Algorithm algorithm) {
    Policy p = Policy.of(10, Duration.ofSeconds(10), algorithm).withName("p");
    String base = "rl:{k}:p:" + algorithm.shortName();
    if (algorithm == Algorithm.SLIDING_LOG) {
      assertThat(keys.of("k", p)).containsExactly(base, base + ":seq");
    } else {
      assertThat(keys.of("k", p)).containsExactly(base);
    }
  }
}
