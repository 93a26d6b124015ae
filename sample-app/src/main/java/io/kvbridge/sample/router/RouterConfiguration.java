package io.kvbridge.sample.router;

import io.kvbridge.sample.SampleProperties;
import io.kvbridge.sample.node.NodeKind;
import java.net.URI;
import java.net.http.HttpClient;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.web.client.RestClient;

/**
 * Runs the router in this JVM unless {@code kvbridge.sample.router.enabled=false}. Without
 * configured node URLs the router calls the nodes on this server, over HTTP like any other client,
 * so the all-in-one deployment takes the same code path as separate processes.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnBooleanProperty(name = "kvbridge.sample.router.enabled", matchIfMissing = true)
public class RouterConfiguration {

  /** The router. */
  @Bean
  public PdRouter pdRouter(
      RestClient.Builder builder, SampleProperties properties, Environment environment) {
    SampleProperties.Router settings = properties.router();
    HttpClient http = HttpClient.newBuilder().connectTimeout(settings.connectTimeout()).build();
    JdkClientHttpRequestFactory requests = new JdkClientHttpRequestFactory(http);
    requests.setReadTimeout(settings.readTimeout());
    RestClient client = builder.clone().requestFactory(requests).build();
    return new PdRouter(
        client,
        properties.engine().context(),
        base(settings.prefillUrl(), NodeKind.PREFILL, properties, environment),
        base(settings.decodeUrl(), NodeKind.DECODE, properties, environment),
        new DropAfterPrefill(settings.dropAfterPrefill()));
  }

  private static Supplier<URI> base(
      @Nullable URI configured,
      NodeKind node,
      SampleProperties properties,
      Environment environment) {
    if (configured != null) {
      return () -> configured;
    }
    String prefix = node.path(properties);
    return () -> {
      String port = environment.getProperty("local.server.port");
      if (port == null) {
        throw new IllegalStateException(
            "the "
                + node.id()
                + " node's URL is not configured and this server has no port yet; set"
                + " kvbridge.sample.router."
                + node.id()
                + "-url");
      }
      return URI.create("http://127.0.0.1:" + port + prefix);
    };
  }
}
