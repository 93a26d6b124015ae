package io.kvbridge.spring.discovery;

import java.util.List;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Matches when {@code kvbridge.discovery.etcd.endpoints} names at least one endpoint, however the
 * list is written ({@code a,b}, {@code endpoints[0]}, a YAML list or the environment).
 */
class OnEtcdEndpointsCondition extends SpringBootCondition {

  static final String PROPERTY = "kvbridge.discovery.etcd.endpoints";

  @Override
  public ConditionOutcome getMatchOutcome(
      ConditionContext context, AnnotatedTypeMetadata metadata) {
    List<String> endpoints =
        Binder.get(context.getEnvironment())
            .bind(PROPERTY, Bindable.listOf(String.class))
            .orElse(List.of());
    boolean set = endpoints.stream().anyMatch(e -> e != null && !e.isBlank());
    return set
        ? ConditionOutcome.match(PROPERTY + " is set")
        : ConditionOutcome.noMatch(PROPERTY + " is not set");
  }
}
