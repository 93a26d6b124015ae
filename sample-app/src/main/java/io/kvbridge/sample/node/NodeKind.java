package io.kvbridge.sample.node;

import io.kvbridge.sample.SampleProperties;
import io.kvbridge.sample.engine.EngineShape;
import io.kvbridge.spi.Role;
import java.util.Locale;
import java.util.Objects;

/**
 * The two kinds of node in a disaggregated deployment. A kind names everything that differs between
 * them: its settings ({@code kvbridge.sample.<id>}), its engine's shape and connector role, its
 * default engine id and path, and the beans it runs as ({@code <id>Node}, with its engine's health
 * {@code <id>Engine}).
 */
public enum NodeKind {
  /** Computes prompts and holds their KV for decode nodes. */
  PREFILL(Role.PRODUCER),
  /** Loads prompts' KV from prefill nodes and generates. */
  DECODE(Role.CONSUMER);

  private final Role role;

  NodeKind(Role role) {
    this.role = role;
  }

  /** The role of this kind's connector. */
  public Role role() {
    return role;
  }

  /**
   * The lower-case name, as in property names and default paths: {@code prefill}, {@code decode}.
   */
  public String id() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** Its settings, {@code kvbridge.sample.<id>}. */
  public SampleProperties.Node settings(SampleProperties properties) {
    return switch (this) {
      case PREFILL -> properties.prefill();
      case DECODE -> properties.decode();
    };
  }

  /**
   * The shape of its engine: {@code kvbridge.sample.<id>.engine.*} over {@code
   * kvbridge.sample.engine.*}.
   */
  public EngineShape engineShape(SampleProperties properties) {
    return switch (this) {
      case PREFILL -> properties.prefillEngine();
      case DECODE -> properties.decodeEngine();
    };
  }

  /** The engine id: {@code kvbridge.sample.<id>.engine-id}, or {@code <id>-0}. */
  public String engineId(SampleProperties properties) {
    return Objects.requireNonNullElse(settings(properties).engineId(), id() + "-0");
  }

  /**
   * The path prefix of the node's completions API: {@code kvbridge.sample.<id>.path} (empty when
   * the node runs alone), or {@code /<id>}.
   */
  public String path(SampleProperties properties) {
    return Objects.requireNonNullElse(settings(properties).path(), "/" + id());
  }

  /** The name of the node's bean: {@code prefillNode} or {@code decodeNode}. */
  public String beanName() {
    return id() + "Node";
  }
}
