package io.kvbridge.sample.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.sample.HttpApi;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ApplicationContext;

/**
 * A node switched off ({@code kvbridge.sample.<kind>.enabled=false}) runs nothing in this JVM: no
 * engine, no health, no completions API; the other node runs as configured.
 */
@SpringBootTest(
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
      "kvbridge.sample.prefill.engine-id=node-test-prefill",
      "kvbridge.sample.decode.enabled=false",
      "kvbridge.sample.router.enabled=false",
      "kvbridge.sample.demo.enabled=false",
      "kvbridge.fake.fabric=node-test"
    })
class NodeConfigurationTest {

  private static final String REQUEST = "{\"prompt\": \"a prompt\", \"max_tokens\": 2}";

  @LocalServerPort int port;
  @Autowired ApplicationContext context;

  @Test
  void theEnabledNodeRunsItsEngineUnderItsKindsNames() {
    Node prefill = context.getBean("prefillNode", Node.class);

    assertThat(prefill.kind()).isEqualTo(NodeKind.PREFILL);
    assertThat(prefill.engine().engineId()).isEqualTo("node-test-prefill");
    assertThat(context.containsBean("prefillEngineHealthIndicator")).isTrue();
    assertThat(new HttpApi(port).post("/prefill/v1/completions", REQUEST).status()).isEqualTo(200);
  }

  @Test
  void theSwitchedOffNodeHasNoEngineNoHealthAndNoEndpoint() {
    assertThat(context.getBeansOfType(Node.class)).containsOnlyKeys("prefillNode");
    assertThat(context.containsBean("decodeEngineHealthIndicator")).isFalse();
    assertThat(new HttpApi(port).post("/decode/v1/completions", REQUEST).errorMessage(404))
        .isEqualTo("there is no endpoint at POST /decode/v1/completions");
  }
}
