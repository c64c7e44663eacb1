package dev.ratelimit.tck.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The test parser reads what RFC 9651 allows and refuses what it refuses: a lenient one would prove nothing. */
class StructuredFieldsTest {
  @Test
  void readsTheDraftsExamples() {
    List<StructuredFields.Member> policy =
        StructuredFields.parseList("\"burst\";q=100;w=60,\"daily\";q=1000;w=86400");
    assertThat(policy).extracting(StructuredFields.Member::string).containsExactly("burst", "daily");
    assertThat(policy).extracting(m -> m.integer("w")).containsExactly(60L, 86400L);
    StructuredFields.Member withKey =
        StructuredFields.parseList("\"peruser\";q=65535;qu=\"content-bytes\";w=10;pk=:sdfjLJUOUH==:").get(0);
    assertThat(withKey.params().get("qu")).isEqualTo("content-bytes");
    assertThat(withKey.params().get("pk")).isInstanceOf(StructuredFields.ByteSequence.class);
  }

  @Test
  void readsEveryBareItemType() {
    List<StructuredFields.Member> all = StructuredFields.parseList(
        "a, \"s \\\" \\\\\", 42, -1.5, ?1, @1659578233, %\"caf%c3%a9\", *tok/x:y, (1 \"two\");p, ok;flag");
    assertThat(all).extracting(StructuredFields.Member::value).containsExactly(
        new StructuredFields.Token("a"), "s \" \\", 42L, new BigDecimal("-1.5"), true,
        new StructuredFields.Date(1659578233), new StructuredFields.DisplayString("café"),
        new StructuredFields.Token("*tok/x:y"), List.of(
            new StructuredFields.Member(1L, java.util.Map.of()), new StructuredFields.Member("two", java.util.Map.of())),
        new StructuredFields.Token("ok"));
    assertThat(all.get(8).params()).containsKey("p");
    assertThat(all.get(9).params()).containsEntry("flag", true);
    assertThat(StructuredFields.parseList(List.of("\"a\";r=1", "\"b\";r=2")))
        .extracting(StructuredFields.Member::string).containsExactly("a", "b");
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "\"café\"",                 // a String holds printable ASCII only
      "\"tab\there\"",            // nor control characters
      "\"a\\nb\"",                // the only escapes are \" and \\
      "\"open",                   // unterminated
      "\"a\", ",                  // a trailing comma
      "\"a\";R=1",                // keys are lowercase
      "\"a\";r=1234567890123456", // 16 digits
      "\"a\";r=1.2345",           // a Decimal has at most 3 fraction digits
      "%\"caf%C3%A9\"",           // a Display String's escapes are lowercase hex
      "%\"%ff\"",                 // and decode as UTF-8
      "\"a\" \"b\"",              // members are separated by commas
      "café",                     // a Token is ASCII
  })
  void refusesWhatTheRfcRefuses(String field) {
    assertThatThrownBy(() -> StructuredFields.parseList(field))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not a structured-field List");
  }
}
