package dev.ratelimit.tck.docs;

import static dev.ratelimit.tck.docs.Poms.all;
import static dev.ratelimit.tck.docs.Poms.child;
import static dev.ratelimit.tck.docs.Poms.parse;
import static dev.ratelimit.tck.docs.Poms.pom;
import static dev.ratelimit.tck.docs.Poms.publishedModules;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Element;

/**
 * ratelimit-bom manages every published module at the project's version, and the install blocks
 * of README.md (Maven and Gradle) and docs/getting-started.md import that BOM and name only
 * modules it manages; the README's name the starter.
 */
class BomTest {
  /** What follows {@code dev.ratelimit:} in a Gradle coordinate: an artifactId and maybe a version. */
  private static final Pattern COORDINATES = Pattern.compile("\"dev\\.ratelimit:([^\"]+)\"");

  private static List<String> managed() throws Exception {
    Element bom = pom("ratelimit-bom/pom.xml");
    return all(bom, "dependency").stream().map(d -> child(d, "artifactId")).toList();
  }

  @Test
  void theBomManagesEveryPublishedModuleAtTheProjectsVersion() throws Exception {
    Element parent = pom("pom.xml");
    Element bom = pom("ratelimit-bom/pom.xml");
    assertThat(all(parent, "module").stream().map(Element::getTextContent)).contains("ratelimit-bom");
    assertThat(child(bom, "parent")).as("an imported BOM would bring its parent's dependencyManagement").isNull();
    assertThat(child(bom, "version")).isEqualTo(child(parent, "version"));
    assertThat(child(bom, "groupId")).isEqualTo(child(parent, "groupId"));
    assertThat(managed()).containsExactlyInAnyOrderElementsOf(publishedModules());
    for (Element dependency : all(bom, "dependency")) {
      assertThat(child(dependency, "groupId")).isEqualTo("dev.ratelimit");
      assertThat(child(dependency, "version")).isEqualTo("${project.version}");
      assertThat(Files.isDirectory(DocPage.root().resolve(child(dependency, "artifactId")))).isTrue();
    }
  }

  @Test
  void theInstallBlocksImportTheBomAndNameModulesItManages() throws Exception {
    String version = child(pom("pom.xml"), "version");
    for (String page : List.of("README.md", "docs/getting-started.md")) {
      Element block = parse("<project>" + DocPage.read(page).block("xml", "ratelimit-bom") + "</project>");
      List<Element> dependencies = all(block, "dependency");
      Element imported = dependencies.get(0);
      assertThat(child(imported, "artifactId")).as(page).isEqualTo("ratelimit-bom");
      assertThat(child(imported, "version")).as(page).isEqualTo(version);
      assertThat(child(imported, "type")).as(page).isEqualTo("pom");
      assertThat(child(imported, "scope")).as(page).isEqualTo("import");
      for (Element dependency : dependencies.subList(1, dependencies.size())) {
        assertThat(child(dependency, "groupId")).as(page).isEqualTo("dev.ratelimit");
        assertThat(child(dependency, "version")).as(page + ": the BOM gives the version").isNull();
        assertThat(managed()).as(page).contains(child(dependency, "artifactId"));
      }
      assertThat(DocPage.read(page).text()).as(page).contains("./mvnw -B install -DskipTests")
          .contains("not on Maven Central yet");
    }
    Element readme = parse("<project>" + DocPage.read("README.md").block("xml", "ratelimit-bom") + "</project>");
    assertThat(all(readme, "artifactId")).extracting(Element::getTextContent)
        .contains("ratelimit-spring-boot-starter");
  }

  @Test
  void theReadmesGradleBlockImportsTheBomAndNamesModulesItManages() throws Exception {
    String block = DocPage.read("README.md").block("kotlin", "ratelimit-bom");
    Matcher m = COORDINATES.matcher(block);
    List<String> coordinates = new ArrayList<>();
    while (m.find()) {
      coordinates.add(m.group(1));
    }
    assertThat(coordinates.get(0)).isEqualTo("ratelimit-bom:" + child(pom("pom.xml"), "version"));
    assertThat(block).contains("platform(\"dev.ratelimit:" + coordinates.get(0) + "\")");
    assertThat(coordinates.subList(1, coordinates.size())).as("the BOM gives the versions")
        .contains("ratelimit-spring-boot-starter").allSatisfy(a -> assertThat(managed()).contains(a));
  }

}
