package dev.ratelimit.internal.expression;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.DayOfWeek;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** How a value becomes a key and a cost, for every front door. */
class ValuesTest {
  enum Tier {
    GOLD {
      @Override
      public String toString() {
        return "Gold tier"; // for people: not the key
      }
    }
  }

  record User(String id) {}

  @Test
  void textsNumbersBooleansCharactersEnumsAndUuidsAreKeys() {
    UUID id = UUID.fromString("0F8FAD5B-D9CB-469F-A165-70867728950E");
    assertThat(Values.key("alice")).isEqualTo("alice");
    assertThat(Values.key(new StringBuilder("sb"))).isEqualTo("sb");
    assertThat(Values.key(42)).isEqualTo("42");
    assertThat(Values.key(42L)).isEqualTo("42");
    assertThat(Values.key(1.5)).isEqualTo("1.5");
    assertThat(Values.key(new BigDecimal("10.0"))).isEqualTo("10.0");
    assertThat(Values.key(true)).isEqualTo("true");
    assertThat(Values.key('x')).isEqualTo("x");
    assertThat(Values.key(DayOfWeek.MONDAY)).isEqualTo("MONDAY");
    assertThat(Values.key(Tier.GOLD)).as("an enum's name, not its toString").isEqualTo("GOLD");
    assertThat(Values.key(id)).isEqualTo("0f8fad5b-d9cb-469f-a165-70867728950e");
  }

  @Test
  void collectionsAndMapsOfKeysAreKeys() {
    Map<String, Object> map = new LinkedHashMap<>();
    map.put("id", 42);
    map.put("tier", Tier.GOLD);
    assertThat(Values.key(map)).isEqualTo("{id=42, tier=GOLD}");
    assertThat(Values.key(List.of("a", 1, DayOfWeek.FRIDAY))).isEqualTo("[a, 1, FRIDAY]");
    assertThat(Values.key(List.of(List.of("a")))).isEqualTo("[[a]]");
  }

  @Test
  void nullBlankAndEverythingElseAreNoKey() {
    List<Object> withNull = new ArrayList<>();
    withNull.add(null);
    for (Object none : new Object[] {null, "", "  ", new StringBuilder(" "), new Object(), new User("u-1"),
        new String[] {"a"}, new int[] {1}, List.of(), Map.of(), withNull, List.of(new Object()),
        Map.of("user", new User("u-1"))}) {
      assertThat(Values.key(none)).as(String.valueOf(none)).isNull();
    }
    assertThat(Values.whyNoKey(null)).isEqualTo("gave null");
    assertThat(Values.whyNoKey(" ")).isEqualTo("gave a blank text");
    assertThat(Values.whyNoKey(new User("u-1"))).startsWith("gave a " + User.class.getTypeName() + ", which is not a key")
        .contains("read one of its values, such as #user.id");
    assertThat(Values.whyNoKey(new String[0])).startsWith("gave a java.lang.String[], which is not a key");
    assertThat(Values.whyNoKey(List.of())).contains("that is empty or holds a value that is not a key");
  }

  @Test
  void whatADeclaredTypeMayHold() {
    for (Class<?> may : List.of(String.class, CharSequence.class, int.class, long.class, boolean.class, char.class,
        Integer.class, Number.class, BigDecimal.class, DayOfWeek.class, Tier.class, UUID.class, List.class,
        Map.class, Object.class, java.io.Serializable.class, Comparable.class, Runnable.class)) {
      assertThat(Values.mayBeKey(may)).as(may.getName()).isTrue();
    }
    for (Class<?> never : List.of(User.class, String[].class, int[].class, Thread.class, java.time.Instant.class)) {
      assertThat(Values.mayBeKey(never)).as(never.getName()).isFalse();
    }
  }

  @Test
  void aCostIsANumberRoundedUp() {
    assertThat(Values.cost(3)).isEqualTo(3);
    assertThat(Values.cost(3L)).isEqualTo(3);
    assertThat(Values.cost((short) 2)).isEqualTo(2);
    assertThat(Values.cost(2.5)).as("never cheaper than asked").isEqualTo(3);
    assertThat(Values.cost(0.1f)).isEqualTo(1);
    assertThat(Values.cost(new BigDecimal("1E-999999999"))).isEqualTo(1);
    assertThat(Values.cost(" 7 ")).as("a decimal text, such as a query parameter").isEqualTo(7);
    assertThat(Values.cost("2.01")).isEqualTo(3);
    assertThat(Values.cost(new BigInteger("99999999999999999999999"))).isEqualTo(Long.MAX_VALUE);
    assertThat(Values.cost(new BigDecimal("1E+999999999"))).isEqualTo(Long.MAX_VALUE);
    assertThat(Values.cost(0)).isZero();
    assertThat(Values.cost(-5)).isZero();
    assertThat(Values.cost("-5")).isZero();
    for (Object notANumber : new Object[] {null, "x", "1e3", "", Double.NaN, Double.POSITIVE_INFINITY, true, 'x',
        List.of(1)}) {
      assertThat(Values.cost(notANumber)).as(String.valueOf(notANumber)).isEqualTo(Values.NOT_A_NUMBER);
    }
  }
}
