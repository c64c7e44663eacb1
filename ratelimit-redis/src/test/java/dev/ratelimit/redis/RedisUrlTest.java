package dev.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** One URL, one server and database, whichever module reads it. */
class RedisUrlTest {
  @ParameterizedTest
  @CsvSource(delimiter = '|', textBlock = """
      redis://127.0.0.1:6390                 | redis://127.0.0.1:6390              | 0
      redis://redis.example                  | redis://redis.example:6379          | 0
      redis://redis.example/                 | redis://redis.example:6379          | 0
      redis://h:6390/2                       | redis://h:6390                      | 2
      rediss://user:p%40ss@h/15              | rediss://user:p%40ss@h:6379         | 15
      redis://:secret@[::1]:7000/1           | redis://:secret@[::1]:7000          | 1
      REDIS://h                              | redis://h:6379                      | 0
      valkey://h:1/3                         | valkey://h:1                        | 3
      redis://u:a+b@h                        | redis://u:a%2Bb@h:6379              | 0
      """)
  void aUrlIsAnAddressWithAPortAndADatabase(String url, String address, int database) {
    assertThat(RedisUrl.parse(url)).isEqualTo(new RedisUrl(address, database));
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', textBlock = """
      http://h:1                   | is not a redis://, rediss://
      redis://app_redis_1:6379     | may not contain '_'
      redis://u:hunter2@h/x        | the path must be a database number
      redis://u:hunter2@h/123      | the path must be a database number
      redis://u:hunter2@h?ssl=true | takes no query
      redis://u:hun ter2@h         | is not a URL
      redis://:hunter2/x+y==@h:6380 | percent-encode them (%2F, %23, %3F, %40)
      redis://u:hunter2@x@h        | percent-encode them
      redis://u:hunter2#x@h        | percent-encode them
      redis://u:hunter2?x@h        | percent-encode them
      """)
  void anythingElseIsRefusedWithoutItsPassword(String url, String message) {
    assertThatThrownBy(() -> RedisUrl.parse(url)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(message).hasMessageNotContaining("hunter2").hasMessageNotContaining("hun ter2");
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', textBlock = """
      redis://user:secret@h:1/2    | redis://***@h:1/2
      redis://user:p@ss@h          | redis://***@h
      redis://u:pa/ss@h            | redis://***@h
      redis://h:1                  | redis://h:1
      """)
  void redactionHidesTheUserAndPassword(String url, String redacted) {
    assertThat(RedisUrl.redact(url)).isEqualTo(redacted);
    assertThat(RedisUrl.parse("redis://u:secret@h").toString()).doesNotContain("secret");
  }
}
