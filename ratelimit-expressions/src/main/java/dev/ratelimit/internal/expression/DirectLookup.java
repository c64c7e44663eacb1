package dev.ratelimit.internal.expression;

import java.util.Map;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.Expression;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.CompoundExpression;
import org.springframework.expression.spel.ast.Indexer;
import org.springframework.expression.spel.ast.StringLiteral;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpression;

/**
 * The two key shapes most rules and annotations use, {@code #name} and {@code #name['literal']} on
 * a map, read without SpEL's interpreter: a map index costs SpEL a type lookup per evaluation
 * (a tenth of a denied request's CPU in a profile of the servlet filter). The answer is the one
 * SpEL gives; anything else, a variable that is not a map included, goes to SpEL.
 */
final class DirectLookup {
  /** What {@link #value} answers when SpEL must evaluate. */
  static final Object NOT_DIRECT = new Object();

  private final String variable;
  private final String index; // null for #name alone

  private DirectLookup(String variable, String index) {
    this.variable = variable;
    this.index = index;
  }

  /** The lookup for {@code expression}, or null when it has neither shape. */
  static DirectLookup of(Expression expression) {
    if (!(expression instanceof SpelExpression spel)) {
      return null;
    }
    SpelNode ast = spel.getAST();
    String name = variableName(ast);
    if (name != null) {
      return new DirectLookup(name, null);
    }
    if (ast instanceof CompoundExpression && ast.getChildCount() == 2
        && (name = variableName(ast.getChild(0))) != null
        && ast.getChild(1) instanceof Indexer indexer && !indexer.isNullSafe() && indexer.getChildCount() == 1
        && indexer.getChild(0) instanceof StringLiteral literal) {
      return new DirectLookup(name, (String) literal.getLiteralValue().getValue());
    }
    return null;
  }

  /** A variable's name, but for {@code #root} and {@code #this}, which are no variables. */
  private static String variableName(SpelNode node) {
    if (!(node instanceof VariableReference) || node.getChildCount() != 0) {
      return null;
    }
    String name = node.toStringAST().substring(1);
    return name.equals("root") || name.equals("this") ? null : name;
  }

  /** The expression's value in {@code context}, or {@link #NOT_DIRECT}. */
  Object value(EvaluationContext context) {
    Object value = context.lookupVariable(variable);
    if (index == null) {
      return value;
    }
    return value instanceof Map<?, ?> map ? map.get(index) : NOT_DIRECT;
  }
}
