package dev.ratelimit.tck.docs;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/** The repository's POMs read as XML, for the tests of what the build publishes. */
final class Poms {
  private Poms() {}

  static Element parse(String xml) throws Exception {
    DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
    Document doc = factory.newDocumentBuilder().parse(new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8)));
    return doc.getDocumentElement();
  }

  /** The POM at {@code path} from the repository's root, e.g. {@code ratelimit-bom/pom.xml}. */
  static Element pom(String path) throws Exception {
    return parse(Files.readString(DocPage.root().resolve(path), StandardCharsets.UTF_8));
  }

  /** The first direct child of {@code parent} named {@code name}, or null. */
  static Element element(Element parent, String name) {
    NodeList nodes = parent.getChildNodes();
    for (int i = 0; i < nodes.getLength(); i++) {
      if (nodes.item(i) instanceof Element e && e.getTagName().equals(name)) {
        return e;
      }
    }
    return null;
  }

  /** The text of the first direct child of {@code parent} named {@code name}, or null. */
  static String child(Element parent, String name) {
    Element e = element(parent, name);
    return e == null ? null : e.getTextContent().strip();
  }

  /** Every element named {@code name} under {@code root}, at any depth. */
  static List<Element> all(Element root, String name) {
    NodeList nodes = root.getElementsByTagName(name);
    List<Element> elements = new ArrayList<>();
    for (int i = 0; i < nodes.getLength(); i++) {
      elements.add((Element) nodes.item(i));
    }
    return elements;
  }

  /** The parent's modules, as directories from the repository's root. */
  static List<String> modules() throws Exception {
    return all(pom("pom.xml"), "module").stream().map(Element::getTextContent).toList();
  }

  /** The value of the property {@code name} that the module's POM sets, or null. */
  static String property(String module, String name) throws Exception {
    Element properties = element(pom(module + "/pom.xml"), "properties");
    return properties == null ? null : child(properties, name);
  }

  /**
   * The modules that a release deploys: every module of the parent but those that set
   * {@code maven.deploy.skip}, and not the BOM, which is published too but manages the others.
   */
  static List<String> publishedModules() throws Exception {
    List<String> published = new ArrayList<>();
    for (String module : modules()) {
      if (!"true".equals(property(module, "maven.deploy.skip")) && !module.equals("ratelimit-bom")) {
        published.add(module);
      }
    }
    return published;
  }
}
