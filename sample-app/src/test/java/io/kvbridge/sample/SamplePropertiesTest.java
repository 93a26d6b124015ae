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

  @Test
  void withoutNodeUrlsTheRouterCallsTheNodesOfThisServer() {
    runner.run(
        context -> {
          SampleProperties.Router router = context.getBean(SampleProperties.class).router();
          assertThat(router.prefillUrls()).isEmpty();
          assertThat(router.decodeUrls()).isEmpty();
        });
  }

  @Test
  void nodeUrlsAreACommaSeparatedList() {
    runner
        .withPropertyValues(
            "kvbridge.sample.router.decode-urls=http://10.0.0.5:8200,http://10.0.0.6:8200")
        .run(
            context ->
                assertThat(context.getBean(SampleProperties.class).router().decodeUrls())
                    .extracting(Object::toString)
                    .containsExactly("http://10.0.0.5:8200", "http://10.0.0.6:8200"));
  }

  @Test
  void aNodeUrlThatIsNotAnAbsoluteHttpUrlIsRejectedNamingItsPlaceInTheList() {
    assertRejected(
        "kvbridge.sample.router.prefill-urls[1] must be an absolute http or https URL such as"
            + " http://10.0.0.5:8100, got 'localhost:8100'",
        "kvbridge.sample.router.prefill-urls=http://10.0.0.5:8100,localhost:8100");
  }

  @Test
  void aNodeListedTwiceIsRejected() {
    assertRejected(
        "kvbridge.sample.router.decode-urls lists http://10.0.0.5:8200 twice",
        "kvbridge.sample.router.decode-urls=http://10.0.0.5:8200,http://10.0.0.5:8200");
  }

  @Test
  void aHealthPathThatIsNotAnAbsolutePathIsRejected() {
    assertRejected(
        "kvbridge.sample.router.health-path must be a path starting with /, got 'actuator/health'",
        "kvbridge.sample.router.health-path=actuator/health");
  }

  @Test
  void aDisconnectCheckIntervalOfZeroIsRejected() {
    assertRejected(
        "kvbridge.sample.disconnect-check-interval must be a positive duration, got PT0S",
        "kvbridge.sample.disconnect-check-interval=0s");
  }

  private void assertRejected(String message, String... properties) {
    runner
        .withPropertyValues(properties)
        .run(context -> assertThat(context).getFailure().rootCause().hasMessage(message));
  }

  @Configuration(proxyBeanMethods = false)
  @EnableConfigurationProperties(SampleProperties.class)
  static class Bind {}
}
