package io.kvbridge.sample.node;

import io.kvbridge.events.EventAuthenticator;
import io.kvbridge.sample.SampleProperties;
import io.kvbridge.sample.broker.NatsEventPublisher;
import io.kvbridge.sample.broker.NatsEvents;
import io.kvbridge.sample.completions.ClientDisconnects;
import io.kvbridge.sample.completions.OpenAiAnswers;
import io.kvbridge.sample.engine.EngineFactory;
import io.kvbridge.sample.engine.EngineHealthIndicator;
import io.kvbridge.spring.KvBridgeProperties;
import io.kvbridge.spring.KvConnectors;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.springframework.beans.factory.BeanRegistrar;
import org.springframework.beans.factory.BeanRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.context.event.EventListener;
import org.springframework.core.env.Environment;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;
import tools.jackson.databind.json.JsonMapper;

/**
 * Runs each kind of node in this JVM unless {@code kvbridge.sample.<kind>.enabled=false}: the node,
 * bean {@code <kind>Node}, on a connector of its own; its engine's health, {@code <kind>Engine}
 * (DOWN with the reason once the engine's step loop has died); and its API at {@code
 * <kvbridge.sample.<kind>.path>/v1/...}, with its KV events at {@code <path>/kv/events}.
 */
@Configuration(proxyBeanMethods = false)
@Import(NodeConfiguration.Nodes.class)
public class NodeConfiguration {

  // Every node's KV event streams, ended when the application closes.
  private final List<KvEventsController> events = new CopyOnWriteArrayList<>();

  /** Maps the API of every node this JVM runs. */
  @Autowired
  void serve(
      ObjectProvider<Node> nodes,
      SampleProperties properties,
      ClientDisconnects clients,
      JsonMapper json,
      KvBridgeProperties kvbridge,
      @Qualifier("requestMappingHandlerMapping") RequestMappingHandlerMapping mappings) {
    Optional<EventAuthenticator> auth = EventAuthentication.of(kvbridge);
    nodes
        .orderedStream()
        .forEach(
            node -> {
              String path = node.kind().path(properties);
              new NodeController(node, clients, new OpenAiAnswers(json)).mapAt(path, mappings);
              KvEventsController streams = new KvEventsController(node, auth);
              streams.mapAt(path, mappings);
              events.add(streams);
            });
  }

  /**
   * Ends the nodes' KV event streams as the application starts to close: a stream never ends by
   * itself, and the web server's graceful shutdown would wait for it.
   */
  @EventListener(ContextClosedEvent.class)
  void closeEventStreams() {
    events.forEach(KvEventsController::closeStreams);
  }

  /** Each node's engine counters on the {@code info} endpoint. */
  @Bean
  public NodeInfoContributor nodeInfoContributor(ObjectProvider<Node> nodes) {
    return new NodeInfoContributor(nodes.orderedStream().toList());
  }

  /**
   * Publishes every node's KV events to NATS JetStream as well ({@link NatsEventPublisher}), when
   * {@code kvbridge.sample.events.nats.url} is set; closing it deletes each node's snapshot there,
   * so routers drop its engine.
   */
  @Bean
  public AutoCloseable natsEventPublishing(
      ObjectProvider<Node> nodes,
      SampleProperties properties,
      KvBridgeProperties kvbridge,
      JsonMapper json) {
    SampleProperties.Nats settings = properties.events().nats();
    List<Node> all = nodes.orderedStream().toList();
    if (!settings.enabled() || all.isEmpty()) {
      return () -> {};
    }
    NatsEvents nats =
        NatsEvents.connect(settings, "kvbridge " + all.get(0).engine().engineId() + " events");
    Optional<EventAuthenticator> auth = EventAuthentication.of(kvbridge);
    List<NatsEventPublisher> publishers =
        all.stream()
            .map(node -> new NatsEventPublisher(nats, node.engine().kvEvents(), auth, json))
            .toList();
    return () -> {
      publishers.forEach(NatsEventPublisher::close);
      nats.close();
    };
  }

  /**
   * What this JVM's nodes publish in etcd, when discovery on etcd is on: the starter gives it to
   * every registration. Static: the connectors the nodes are built on need it before this
   * configuration, which maps the nodes, can be created.
   */
  @Bean
  public static NodeRegistrations nodeRegistrations(
      SampleProperties properties, Environment environment) {
    return new NodeRegistrations(properties, environment);
  }

  /** Registers the node and its engine's health for each kind that is enabled. */
  static final class Nodes implements BeanRegistrar {
    @Override
    public void register(BeanRegistry registry, Environment environment) {
      for (NodeKind kind : NodeKind.values()) {
        String enabled = "kvbridge.sample." + kind.id() + ".enabled";
        if (!environment.getProperty(enabled, Boolean.class, true)) {
          continue;
        }
        registry.registerBean(
            kind.beanName(),
            Node.class,
            node ->
                node.supplier(
                    context -> {
                      Node started =
                          Node.start(
                              kind,
                              context.bean(KvConnectors.class),
                              context.bean(EngineFactory.class),
                              context.bean(SampleProperties.class));
                      context.bean(NodeRegistrations.class).started(started);
                      return started;
                    }));
        registry.registerBean(
            kind.id() + "EngineHealthIndicator",
            EngineHealthIndicator.class,
            health ->
                health.supplier(
                    context ->
                        new EngineHealthIndicator(
                            context.bean(kind.beanName(), Node.class).engine())));
      }
    }
  }
}
