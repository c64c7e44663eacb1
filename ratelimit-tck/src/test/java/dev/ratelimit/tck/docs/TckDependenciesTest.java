package dev.ratelimit.tck.docs;

import static dev.ratelimit.tck.docs.Poms.all;
import static dev.ratelimit.tck.docs.Poms.child;
import static dev.ratelimit.tck.docs.Poms.parse;
import static dev.ratelimit.tck.docs.Poms.pom;
import static dev.ratelimit.tck.docs.Poms.property;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Element;

/**
 * A backend's author who depends on ratelimit-tck gets ratelimit-core and nothing else: no Redis
 * binary, no test tooling, and JUnit and AssertJ at the versions they add themselves, which
 * docs/writing-a-backend.md lists.
 */
class TckDependenciesTest {
  /** groupId:artifactId of the TCK's dependencies, by scope ("compile" when none is written). */
  private static Map<String, List<String>> tckDependenciesByScope() throws Exception {
    return all(pom("ratelimit-tck/pom.xml"), "dependency").stream().collect(Collectors.groupingBy(
        d -> child(d, "scope") == null ? "compile" : child(d, "scope"),
        Collectors.mapping(d -> child(d, "groupId") + ":" + child(d, "artifactId"), Collectors.toList())));
  }

  @Test
  void theTckBringsOnlyTheCoreAndLeavesJUnitAndAssertJToItsUser() throws Exception {
    Map<String, List<String>> byScope = tckDependenciesByScope();
    assertThat(byScope.get("compile")).containsExactly("dev.ratelimit:ratelimit-core");
    assertThat(byScope.get("provided"))
        .containsExactlyInAnyOrder("org.junit.jupiter:junit-jupiter", "org.assertj:assertj-core");
    assertThat(byScope.keySet()).containsExactlyInAnyOrder("compile", "provided", "test");
    assertThat(byScope.get("test")).contains("dev.ratelimit:ratelimit-test-support")
        .doesNotContain("com.github.lansheng228:embedded-redis");
  }

  @Test
  void writingABackendListsWhatATckUserAdds() throws Exception {
    String block = DocPage.read("docs/writing-a-backend.md").block("xml", "ratelimit-tck");
    Map<String, Element> listed = all(parse(block), "dependency").stream()
        .collect(Collectors.toMap(d -> child(d, "groupId") + ":" + child(d, "artifactId"), d -> d));
    Map<String, String> versions = Map.of(
        "org.junit.jupiter:junit-jupiter", property(".", "junit.version"),
        "org.assertj:assertj-core", property(".", "assertj.version"));

    assertThat(listed.keySet()).containsExactlyInAnyOrderElementsOf(Stream.concat(
        Stream.of("dev.ratelimit:ratelimit-tck"), tckDependenciesByScope().get("provided").stream()).toList());
    listed.values().forEach(d -> assertThat(child(d, "scope")).isEqualTo("test"));
    assertThat(child(listed.get("dev.ratelimit:ratelimit-tck"), "version")).as("the BOM gives it").isNull();
    versions.forEach((dependency, version) ->
        assertThat(child(listed.get(dependency), "version")).as(dependency).isEqualTo(version));
  }
}
