package io.kvbridge.sample;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

/** Invalid sample settings stop start-up with a message naming the property. */
class SamplePropertiesTest {

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner().withUserConfiguration(Bind.class);

  @Test
  void theContextDefaultsTo8192Tokens() {
    runner.run(
        context ->
            assertThat(context.getBean(SampleProperties.class).engine().context().tokens())
                .isEqualTo(8192));
  }

  @Test
  void aContextOfNoTokensIsRejectedNamingTheProperty() {
    runner
        .withPropertyValues("kvbridge.sample.engine.max-context-tokens=0")
        .run(
            context ->
                assertThat(context)
                    .getFailure()
                    .rootCause()
                    .hasMessageContaining(
                        "kvbridge.sample.engine.max-context-tokens must be positive"));
  }

  @Configuration(proxyBeanMethods = false)
  @EnableConfigurationProperties(SampleProperties.class)
  static class Bind {}
}
