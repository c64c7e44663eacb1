package dev.ratelimit.tck.docs;

import static dev.ratelimit.tck.docs.Poms.all;
import static dev.ratelimit.tck.docs.Poms.child;
import static dev.ratelimit.tck.docs.Poms.element;
import static dev.ratelimit.tck.docs.Poms.modules;
import static dev.ratelimit.tck.docs.Poms.pom;
import static dev.ratelimit.tck.docs.Poms.property;
import static dev.ratelimit.tck.docs.Poms.publishedModules;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Element;

/**
 * The licence, and what Maven Central requires of every published POM: name, description, url,
 * licenses, scm and developers. The examples and the benchmarks are never deployed.
 */
class PublishingTest {
  private static final List<String> INHERITED = List.of("url", "licenses", "developers", "scm");

  @Test
  void theLicenceIsApache2AndThePomsSayIt() throws Exception {
    String licence = Files.readString(DocPage.root().resolve("LICENSE"), StandardCharsets.UTF_8);
    assertThat(licence).contains("Apache License", "Version 2.0, January 2004", "END OF TERMS AND CONDITIONS");
    Element license = all(pom("pom.xml"), "license").get(0);
    assertThat(child(license, "name")).isEqualTo("Apache-2.0");
    assertThat(child(license, "url")).isEqualTo("https://www.apache.org/licenses/LICENSE-2.0.txt");
  }

  @Test
  void theParentGivesEveryPublishedModuleItsUrlLicencesDevelopersAndScm() throws Exception {
    Element parent = pom("pom.xml");
    assertThat(child(parent, "url")).startsWith("https://");
    for (Element license : all(parent, "license")) {
      assertThat(child(license, "name")).isNotBlank();
      assertThat(child(license, "url")).startsWith("https://");
    }
    assertThat(all(parent, "license")).hasSize(1);
    assertThat(all(parent, "developer")).isNotEmpty().allSatisfy(d -> assertThat(child(d, "name")).isNotBlank());
    Element scm = element(parent, "scm");
    assertThat(child(scm, "connection")).startsWith("scm:git:");
    assertThat(child(scm, "developerConnection")).startsWith("scm:git:");
    assertThat(child(scm, "url")).isEqualTo(child(parent, "url"));
    // else a child inherits url and scm with its artifactId appended: pages that do not exist
    assertThat(parent.getAttribute("child.project.url.inherit.append.path")).isEqualTo("false");
    for (String part : List.of("connection", "developerConnection", "url")) {
      assertThat(scm.getAttribute("child.scm." + part + ".inherit.append.path")).as(part).isEqualTo("false");
    }

    assertThat(publishedModules()).contains("ratelimit-core", "ratelimit-spring-boot-starter");
    for (String module : publishedModules()) {
      Element pom = pom(module + "/pom.xml");
      assertThat(child(element(pom, "parent"), "artifactId")).as(module).isEqualTo("ratelimit-parent");
      assertThat(child(pom, "name")).as(module).isNotBlank();
      assertThat(child(pom, "description")).as(module).isNotBlank();
      for (String inherited : INHERITED) {
        assertThat(element(pom, inherited)).as(module + " inherits the parent's " + inherited).isNull();
      }
    }
  }

  @Test
  void everyPublishedModuleNamesItsModuleAndHasItsJarTested() throws Exception {
    for (String module : publishedModules()) {
      assertThat(all(pom(module + "/pom.xml"), "Automatic-Module-Name")).as(module).hasSize(1)
          .allSatisfy(name -> assertThat(name.getTextContent()).startsWith("dev.ratelimit."));
    }
    // ArtifactJarsTest opens the jars of the modules that ratelimit-artifact-tests depends on
    List<String> tested = all(pom("ratelimit-artifact-tests/pom.xml"), "dependency").stream()
        .filter(d -> "dev.ratelimit".equals(child(d, "groupId"))).map(d -> child(d, "artifactId")).toList();
    assertThat(tested).containsExactlyInAnyOrderElementsOf(publishedModules());
  }

  @Test
  void theBomWithoutAParentRepeatsTheParentsMetadata() throws Exception {
    Element parent = pom("pom.xml");
    Element bom = pom("ratelimit-bom/pom.xml");
    assertThat(child(bom, "name")).isNotBlank();
    assertThat(child(bom, "description")).isNotBlank();
    for (String part : INHERITED) {
      assertThat(element(bom, part)).as(part).isNotNull();
      assertThat(normalized(element(bom, part))).as(part).isEqualTo(normalized(element(parent, part)));
    }
  }

  @Test
  void theExamplesAndTheBenchmarksAreNeverDeployed() throws Exception {
    List<String> applications = modules().stream()
        .filter(m -> m.startsWith("examples/") || m.startsWith("ratelimit-bench")).toList();
    assertThat(applications).contains("examples/spring-boot-demo", "ratelimit-bench", "ratelimit-bench/front-door");
    for (String module : applications) {
      assertThat(property(module, "maven.deploy.skip")).as(module).isEqualTo("true");
    }
    assertThat(publishedModules()).doesNotContainAnyElementsOf(applications);
  }

  @Test
  void theReleaseProfileBuildsSourcesJavadocAndSignaturesOfThePublishedModulesOnly() throws Exception {
    Element parent = pom("pom.xml");
    Map<String, String> goals = new HashMap<>();
    for (Element plugin : all(release(parent), "plugin")) {
      goals.put(child(plugin, "artifactId"), all(plugin, "goal").get(0).getTextContent());
    }
    assertThat(goals).containsOnly(entry("maven-source-plugin", "jar-no-fork"),
        entry("maven-javadoc-plugin", "jar"), entry("maven-gpg-plugin", "sign"));
    Map<String, String> versions = new HashMap<>();
    for (Element plugin : all(element(element(parent, "build"), "pluginManagement"), "plugin")) {
      versions.put(child(plugin, "artifactId"), child(plugin, "version"));
    }
    assertThat(versions).as("pinned in pluginManagement").containsKeys(goals.keySet().toArray(String[]::new));
    // the BOM, without the parent, signs its POM with the same plugin
    Element bomGpg = all(release(pom("ratelimit-bom/pom.xml")), "plugin").get(0);
    assertThat(child(bomGpg, "artifactId")).isEqualTo("maven-gpg-plugin");
    assertThat(child(bomGpg, "version")).isEqualTo(property(".", "gpg-plugin.version"));

    List<String> published = publishedModules();
    List<String> unpublished = modules().stream().filter(m -> !published.contains(m))
        .filter(m -> !m.equals("ratelimit-bom")).toList();
    assertThat(unpublished).contains("examples/ratelimit-service", "ratelimit-bench", "ratelimit-test-support");
    for (String module : unpublished) {
      for (String skip : List.of("maven.deploy.skip", "maven.source.skip", "maven.javadoc.skip", "gpg.skip")) {
        assertThat(property(module, skip)).as(module + " " + skip).isEqualTo("true");
      }
    }
  }

  private static Element release(Element pom) {
    return all(pom, "profile").stream().filter(p -> "release".equals(child(p, "id"))).findFirst().orElseThrow();
  }

  private static String normalized(Element element) {
    return element.getTextContent().replaceAll("\\s+", " ").strip();
  }
}
