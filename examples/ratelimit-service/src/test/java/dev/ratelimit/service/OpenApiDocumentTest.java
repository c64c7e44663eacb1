package dev.ratelimit.service;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.servlet.mvc.method.RequestMappingInfo;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;
import org.yaml.snakeyaml.Yaml;

/** The OpenAPI document describes exactly the operations the controller maps: no more, no fewer. */
@SpringBootTest
class OpenApiDocumentTest {
  @Autowired
  @Qualifier("requestMappingHandlerMapping")
  RequestMappingHandlerMapping mappings;

  @Test
  @SuppressWarnings("unchecked")
  void documentsEveryOperationAndNothingElse() throws IOException {
    Map<String, Object> document;
    try (InputStream in = getClass().getResourceAsStream("/static/v1/openapi.yaml")) {
      document = new Yaml().load(in);
    }
    Set<String> documented = new TreeSet<>();
    Map<String, Map<String, Object>> paths = (Map<String, Map<String, Object>>) document.get("paths");
    paths.forEach((path, operations) -> operations.keySet()
        .forEach(method -> documented.add(method.toUpperCase() + " " + path)));

    Set<String> mapped = new TreeSet<>();
    for (RequestMappingInfo info : mappings.getHandlerMethods().entrySet().stream()
        .filter(e -> e.getValue().getBeanType() == DecisionController.class).map(Map.Entry::getKey).toList()) {
      for (String pattern : info.getPatternValues()) {
        for (RequestMethod method : info.getMethodsCondition().getMethods()) {
          mapped.add(method.name() + " " + pattern.replace("{*key}", "{key}"));
        }
      }
    }
    assertThat(mapped).hasSize(10);
    assertThat(documented).isEqualTo(mapped);
  }
}
