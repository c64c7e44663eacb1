package dev.ratelimit.servlet;

import dev.ratelimit.http.RateLimitRule;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.internal.expression.Sandbox;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.EvaluationException;
import org.springframework.expression.Expression;
import org.springframework.expression.spel.standard.SpelExpressionParser;

/**
 * Key and cost expressions run in a sandbox: what could reach the JVM is refused when the rule is
 * built, and the evaluation context could not run it anyway. Nothing is ever executed.
 */
class ExpressionSandboxTest {
  private static final Policy P = Policy.of(10, Duration.ofMinutes(1)).withName("p");

  @BeforeEach
  void resetCanary() {
    Canary.TRIPS.set(0);
  }

  private static RateLimitRule.Builder rule() {
    return RateLimitRule.builder("sandboxed").path("/**").policy(P);
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "T(java.lang.Runtime).getRuntime()",
      "T(java.lang.Runtime).getRuntime().exec('touch /tmp/pwned')",
      "new java.io.File('x')",
      "new java.io.File('x').delete()",
      "T(dev.ratelimit.servlet.Canary).trip()",
      "new dev.ratelimit.servlet.Canary()",
      "#clientIp.getClass().forName('java.lang.Runtime')",
      "#request.getSession()",
      "#request.getServletContext().getClassLoader()",
      "@someBean",
      "#clientIp = 'forged'",
      "#reverse('x')",
  })
  void refusedWhenTheRuleIsBuilt(String expression) {
    assertThatThrownBy(() -> rule().key(expression).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("rule 'sandboxed': key expression '" + expression + "'");
    assertThatThrownBy(() -> rule().cost(expression).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("rule 'sandboxed': cost expression '" + expression + "'");
    assertThat(Canary.TRIPS).hasValue(0);
  }

  @Test
  void theMessageSaysWhatIsRefused() {
    assertThatThrownBy(() -> rule().key("T(java.lang.Runtime).getRuntime()").build())
        .hasMessageContaining("type references");
    assertThatThrownBy(() -> rule().key("new java.io.File('x')").build())
        .hasMessageContaining("constructors");
    assertThatThrownBy(() -> rule().key("#headers.get('x')").build())
        .hasMessageContaining("method calls");
  }

  @Test
  void unknownVariablesAndSyntaxErrorsAreRefused() {
    assertThatThrownBy(() -> rule().key("#clientIP").build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("reads #clientIP, an unknown variable")
        .hasMessageContaining("#clientIp");
    assertThatThrownBy(() -> rule().key("#headers['x'").build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("rule 'sandboxed': key expression '#headers['x''")
        .hasMessageContaining("does not parse");
    assertThatThrownBy(() -> rule().cost(" ").build())
        .hasMessageContaining("rule 'sandboxed': cost expression must not be blank");
  }

  /** A property the evaluation could never read fails the rule, not every request. */
  @ParameterizedTest
  @org.junit.jupiter.params.provider.CsvSource(delimiter = '|', value = {
      "#request.session               | the request's properties are",
      "#request.remoteAdr             | remoteAddr",
      "#headers.Authorization         | #headers['Authorization']",
      "#pathVariables.id              | #pathVariables['id']",
      "#principal.name                | #principal is a text",
      "#request.userPrincipal.nam     | a principal's property is name",
      "#request.cookies.value         | #request.cookies[0].value",
      "#request.cookies[0].val        | a cookie's properties are name and value",
      "clientIp                       | variables start with #",
      "#headers['x'] ?: remoteAddr    | variables start with #",
  })
  void aPropertyNoRequestHasIsRefusedWhenTheRuleIsBuilt(String expression, String hint) {
    assertThatThrownBy(() -> rule().key(expression).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("rule 'sandboxed': key expression '" + expression + "'")
        .hasMessageContaining(hint);
  }

  @Test
  void propertiesThatExistPassTheBuild() {
    for (String expression : List.of("#request.remoteAddr", "#request.userPrincipal?.name", "#request.cookies[0].value",
        "#request.cookies.?[name == 'session'][0].value", "#headers['X-Api-Key'] ?: #clientIp")) {
      assertThat(rule().key(expression).build().key()).isEqualTo(expression);
    }
  }

  /** The second fence: an expression that got past the build-time check still cannot run. */
  @ParameterizedTest
  @ValueSource(strings = {
      "T(dev.ratelimit.servlet.Canary).trip()",
      "new dev.ratelimit.servlet.Canary()",
      "T(java.lang.Runtime).getRuntime()",
      "new java.io.File('x')",
      "#clientIp.getClass()",
      "#clientIp.class",
      "#request.session",
      "#request.servletContext",
      "#request.inputStream",
      "#request.class",
      "#headers.getClass()",
  })
  void theEvaluationContextRefusesItToo(String expression) {
    Expression unchecked = new SpelExpressionParser().parseExpression(expression);
    Expressions.RequestValues values =
        new Expressions.RequestValues(Stubs.request("192.0.2.1"), "192.0.2.1", "/x", "GET");
    assertThatThrownBy(() -> unchecked.getValue(Expressions.context(values, Map.of(), Expressions.NAMES)))
        .isInstanceOf(EvaluationException.class);
    assertThat(Canary.TRIPS).hasValue(0);
  }

  @Test
  void whatTheSandboxAllows() {
    Expressions.RequestValues values = new Expressions.RequestValues(
        Stubs.request("192.0.2.1", "X-Api-Key", "k-1", "X-Multi", "a", "X-Multi", "b"), "192.0.2.1", "/x", "GET");
    assertThat(eval("#clientIp + ':' + #path", values)).isEqualTo("192.0.2.1:/x");
    assertThat(eval("#headers['x-api-key']", values)).isEqualTo("k-1"); // case-insensitive
    assertThat(eval("#headers['X-Multi']", values)).isEqualTo("a"); // the first value
    assertThat(eval("#headers['absent'] ?: 'anon'", values)).isEqualTo("anon");
    assertThat(eval("#method == 'GET' ? 1 : 5", values)).isEqualTo(1);
    assertThat(eval("#pathVariables['id']", values)).isEqualTo("42");
    assertThat(eval("#request.remoteAddr", values)).isEqualTo("192.0.2.1");
    assertThat(eval("#principal", values)).isNull();
  }

  private static Object eval(String expression, Expressions.RequestValues values) {
    Expression parsed = Expressions.parse(expression, "test");
    return parsed.getValue(Expressions.context(values, Map.of("id", "42"), Sandbox.variables(parsed)));
  }

  @Test
  void onlyTheVariablesAnExpressionUsesAreComputed() {
    assertThat(Sandbox.variables(Expressions.parse("#clientIp + ':' + #headers['k'] ?: #path", "test")))
        .containsExactlyInAnyOrder("clientIp", "headers", "path");
    assertThat(Sandbox.variables(Expressions.parse("'fixed'", "test"))).isEmpty();
    Expressions.RequestValues values = new Expressions.RequestValues(Stubs.request("2001:db8:1:2::7"),
        "2001:db8:1:2::7", "/x", "GET");
    assertThat(eval("#clientNetwork", values)).isEqualTo("2001:db8:1:2::/64");
    Expression path = Expressions.parse("#path", "test");
    EvaluationContext context = Expressions.context(values, Map.of(), Sandbox.variables(path));
    assertThat(context.lookupVariable("path")).isEqualTo("/x");
    assertThat(context.lookupVariable("clientNetwork")).as("not used, not computed").isNull();
    assertThat(context.lookupVariable("params")).isNull();
  }

  @Test
  void queryParametersAreDecodedFromTheQueryStringOnly() {
    assertThat(Expressions.queryParams("a=1&a=2&b=x+y&c=%E2%82%AC&d&=e&bad=%zz"))
        .containsEntry("a", "1").containsEntry("b", "x y").containsEntry("c", "€").containsEntry("d", "")
        .doesNotContainKey("bad");
    assertThat(Expressions.queryParams(null)).isEmpty();
  }

  @Test
  void theFilterBuilderRefusesBadExpressionsToo() {
    try (RateLimiter limiter = RateLimiter.inMemory()) {
      RateLimitRule ok = rule().build();
      RateLimitRule bad = new RateLimitRule("other", ok.paths(), ok.methods(), ok.policies(), "#clientIp", "1");
      assertThat(RateLimitFilter.builder(limiter).rule(ok).rule(bad).build()).isNotNull();
      assertThatThrownBy(() -> new RateLimitRule("other", ok.paths(), ok.methods(), ok.policies(),
          "new java.io.File('x')", "1"))
          .hasMessageContaining("rule 'other': key expression 'new java.io.File('x')'");
    }
  }
}
