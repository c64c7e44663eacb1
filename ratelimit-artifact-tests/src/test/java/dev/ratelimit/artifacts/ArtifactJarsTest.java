package dev.ratelimit.artifacts;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.lang.module.ModuleReference;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;

/**
 * The published jars as a user's build resolves them: this module depends on each of them, so its
 * test class path holds their jars. The module's pom runs these tests in the integration-test phase
 * of {@code ./mvnw verify}, when the reactor has packaged every one of them; a class directory in
 * place of a jar fails the test.
 */
class ArtifactJarsTest {
  /** Each published jar's module name: what {@code requires} names on the module path. */
  private static final Map<String, String> MODULE_NAMES = Map.of(
      "ratelimit-core", "dev.ratelimit.core",
      "ratelimit-redis", "dev.ratelimit.redis",
      "ratelimit-expressions", "dev.ratelimit.expressions",
      "ratelimit-http", "dev.ratelimit.http",
      "ratelimit-servlet", "dev.ratelimit.servlet",
      "ratelimit-webflux", "dev.ratelimit.webflux",
      "ratelimit-annotations", "dev.ratelimit.annotations",
      "ratelimit-spring-boot-starter", "dev.ratelimit.spring",
      "ratelimit-spring-cloud-gateway", "dev.ratelimit.gateway",
      "ratelimit-tck", "dev.ratelimit.tck");

  private static List<Path> classPath() {
    return Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
        .map(Path::of).toList();
  }

  /** The artifact's jar on the class path. */
  private static Path jar(String artifactId) {
    for (Path entry : classPath()) {
      String name = entry.getFileName().toString();
      if (name.endsWith(".jar") && name.startsWith(artifactId + "-")
          && Character.isDigit(name.charAt(artifactId.length() + 1))) {
        return entry;
      }
      if (entry.endsWith(Path.of(artifactId, "target", "classes"))) {
        throw new AssertionError(artifactId + " is on the class path as classes, not as its jar: these tests"
            + " run in the integration-test phase (./mvnw verify), after every module is packaged");
      }
    }
    throw new AssertionError(artifactId + " is not on the test class path: " + classPath());
  }

  private static ModuleDescriptor module(Path jar) {
    Set<ModuleReference> found = ModuleFinder.of(jar).findAll();
    assertThat(found).as(jar.toString()).hasSize(1);
    return found.iterator().next().descriptor();
  }

  @Test
  void everyPublishedJarNamesItsModule() throws Exception {
    for (Map.Entry<String, String> e : MODULE_NAMES.entrySet()) {
      Path jar = jar(e.getKey());
      try (JarFile file = new JarFile(jar.toFile())) {
        assertThat(file.getManifest().getMainAttributes().getValue("Automatic-Module-Name"))
            .as(jar.toString()).isEqualTo(e.getValue());
      }
      // what the JVM makes of the jar on the module path
      ModuleDescriptor module = module(jar);
      assertThat(module.name()).as(jar.toString()).isEqualTo(e.getValue());
      assertThat(module.isAutomatic()).isTrue();
    }
    // and no published jar is left out of MODULE_NAMES
    List<String> ours = classPath().stream().map(p -> p.getFileName().toString())
        .filter(name -> name.startsWith("ratelimit-") && name.endsWith(".jar")).toList();
    assertThat(ours).hasSize(MODULE_NAMES.size());
  }

  @Test
  void gettingStartedNamesEveryModule() throws Exception {
    String page = Files.readString(Path.of("..", "docs", "getting-started.md"), StandardCharsets.UTF_8);
    assertThat(page).contains("automatic module");
    for (String name : MODULE_NAMES.values()) {
      assertThat(page).contains("`" + name + "`");
    }
  }

  @Test
  void noTwoPublishedJarsShareAPackage() {
    // the module path refuses two modules with one package (a split package)
    Map<String, String> owner = new HashMap<>();
    Map<String, String> split = new LinkedHashMap<>();
    for (String artifactId : MODULE_NAMES.keySet()) {
      for (String pkg : module(jar(artifactId)).packages()) {
        String before = owner.putIfAbsent(pkg, artifactId);
        if (before != null) {
          split.put(pkg, before + " and " + artifactId);
        }
      }
    }
    assertThat(owner).containsKeys("dev.ratelimit", "dev.ratelimit.redis", "dev.ratelimit.tck");
    assertThat(split).as("packages in two jars").isEmpty();
  }

  @Test
  void thePublishedModulesBringNoTestToolingOrRedisBinary() {
    // what depending on them brings (ratelimit-tck's users included): neither the embedded
    // redis-server binary nor this repository's own test tooling
    List<String> entries = classPath().stream().map(p -> p.toString().replace('\\', '/')).toList();
    assertThat(entries).anyMatch(e -> e.contains("ratelimit-tck"))
        .noneMatch(e -> e.contains("embedded-redis"))
        .noneMatch(e -> e.contains("ratelimit-test-support"));
    ClassLoader loader = getClass().getClassLoader();
    assertThat(loader.getResource("dev/ratelimit/tck/RateLimiterContract.class")).isNotNull();
    assertThat(loader.getResource("dev/ratelimit/tck/redis/RedisServer.class")).isNull();
    assertThat(loader.getResource("redis/embedded/RedisServer.class")).isNull();
  }
}
