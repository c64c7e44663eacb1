package dev.ratelimit;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** Records what a limiter reports, in order. */
final class RecordingListener implements RateLimitListener {
  final List<String> decisions = Collections.synchronizedList(new ArrayList<>());
  final List<Outcome> outcomes = Collections.synchronizedList(new ArrayList<>());
  final List<Boolean> calls = Collections.synchronizedList(new ArrayList<>());
  final List<Long> callNanos = Collections.synchronizedList(new ArrayList<>());
  final List<Throwable> errors = Collections.synchronizedList(new ArrayList<>());
  final List<String> transitions = Collections.synchronizedList(new ArrayList<>());

  @Override
  public void onDecision(Policy policy, Outcome outcome) {
    decisions.add(policy.name() + ":" + outcome);
    outcomes.add(outcome);
  }

  @Override
  public void onBackendCall(long nanos, boolean success) {
    calls.add(success);
    callNanos.add(nanos);
  }

  @Override
  public void onBackendError(Throwable error) {
    errors.add(error);
  }

  @Override
  public void onCircuitStateChange(CircuitState from, CircuitState to) {
    transitions.add(from + "->" + to);
  }

  void clear() {
    decisions.clear();
    outcomes.clear();
    calls.clear();
    callNanos.clear();
    errors.clear();
    transitions.clear();
  }
}
