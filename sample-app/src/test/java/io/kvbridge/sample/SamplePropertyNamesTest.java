package io.kvbridge.sample;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

import io.kvbridge.spring.InvalidKvBridgePropertyException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;
import org.springframework.core.io.ClassPathResource;

/**
 * A property under {@code kvbridge.sample.} that the sample does not have stops start-up naming it,
 * with the known property it is closest to; every known one, however written, passes.
 */
@ExtendWith(OutputCaptureExtension.class)
class SamplePropertyNamesTest {

  @Test
  void theRenamedDecodeUrlStopsStartUpSuggestingDecodeUrls(CapturedOutput output) {
    assertThatExceptionOfType(RuntimeException.class)
        .isThrownBy(
            () ->
                new SpringApplicationBuilder(SampleApplication.class)
                    .profiles("router")
                    .web(WebApplicationType.NONE)
                    .run(
                        "--kvbridge.sample.router.decode-url=http://10.0.0.7:8200",
                        "--spring.main.banner-mode=off")
                    .close());

    assertThat(output)
        .contains(
            "Invalid kvbridge configuration: kvbridge.sample.router.decode-url (did you mean"
                + " kvbridge.sample.router.decode-urls?) is not a property of the sample app",
            "Update kvbridge.sample.router.decode-url in your application's configuration.");
  }

  @Test
  void anUnknownPropertyIsNamedInTheFailure() {
    assertThatExceptionOfType(InvalidKvBridgePropertyException.class)
        .isThrownBy(() -> check(Map.of("kvbridge.sample.router.prefill-url", "http://p:8100")))
        .satisfies(e -> assertThat(e.property()).isEqualTo("kvbridge.sample.router.prefill-url"))
        .withMessage(
            "kvbridge.sample.router.prefill-url (did you mean kvbridge.sample.router.prefill-urls?)"
                + " is not a property of the sample app, which would ignore it; its properties are"
                + " listed in sample-app/README.md");
  }

  @Test
  void everyUnknownPropertyIsNamedAndOnlyCloseOnesGetASuggestion() {
    assertThatExceptionOfType(InvalidKvBridgePropertyException.class)
        .isThrownBy(
            () ->
                check(
                    Map.of(
                        "kvbridge.sample.colour", "blue",
                        "kvbridge.sample.demo.request", "5",
                        "kvbridge.sample.demo.requests", "5")))
        .withMessageStartingWith(
            "kvbridge.sample.colour, kvbridge.sample.demo.request (did you mean"
                + " kvbridge.sample.demo.requests?) are not properties of the sample app");
  }

  @Test
  void anUnknownPropertyFromTheEnvironmentIsNamed() {
    StandardEnvironment environment = new StandardEnvironment();
    environment
        .getPropertySources()
        .addFirst(
            new SystemEnvironmentPropertySource(
                "test-systemEnvironment",
                Map.of("KVBRIDGE_SAMPLE_ROUTER_DECODE_URL", "http://d:8200")));

    assertThatExceptionOfType(InvalidKvBridgePropertyException.class)
        .isThrownBy(() -> SamplePropertyNames.check(environment))
        .withMessageContaining("did you mean kvbridge.sample.router.decode-urls?");
  }

  @Test
  void everyKnownPropertyPassesWrittenAsFilesAndEnvironmentVariablesWriteThem() {
    StandardEnvironment environment = new StandardEnvironment();
    Map<String, Object> files = new HashMap<>();
    SamplePropertyNames.known().forEach(name -> files.put(name, "x"));
    files.put("kvbridge.sample.router.decode-urls[0]", "http://d:8200");
    files.put("kvbridge.sample.router.prefillUrls", "http://p:8100");
    environment.getPropertySources().addFirst(new MapPropertySource("files", files));
    environment
        .getPropertySources()
        .addFirst(
            new SystemEnvironmentPropertySource(
                "test-systemEnvironment",
                Map.of(
                    "KVBRIDGE_SAMPLE_ROUTER_DECODEURLS", "http://d:8200",
                    "KVBRIDGE_SAMPLE_ROUTER_PREFILL_URLS", "http://p:8100",
                    "KVBRIDGE_SAMPLE_DECODE_ENGINE_TPDEGREE", "2",
                    "KVBRIDGE_SAMPLE_DEMO_EXIT_AFTER", "true")));

    SamplePropertyNames.check(environment);

    assertThat(SamplePropertyNames.known())
        .contains(
            "kvbridge.sample.router.decode-urls",
            "kvbridge.sample.prefill.engine.tokens-per-block",
            "kvbridge.sample.advertised-host")
        .hasSize(files.size() - 2);
  }

  @Test
  void theSamplesOwnConfigurationFilesSetOnlyKnownProperties() throws Exception {
    StandardEnvironment environment = new StandardEnvironment();
    for (String file :
        List.of(
            "application.yml",
            "application-prefill.yml",
            "application-decode.yml",
            "application-router.yml")) {
      new YamlPropertySourceLoader()
          .load(file, new ClassPathResource(file))
          .forEach(source -> environment.getPropertySources().addLast(source));
    }

    assertThat(SamplePropertyNames.unknown(ConfigurationPropertySources.get(environment)))
        .isEmpty();
    assertThat(environment.getProperty("kvbridge.sample.router.decode-urls"))
        .isEqualTo("http://127.0.0.1:8200");
  }

  private static void check(Map<String, Object> properties) {
    StandardEnvironment environment = new StandardEnvironment();
    environment.getPropertySources().addFirst(new MapPropertySource("test", properties));
    SamplePropertyNames.check(environment);
  }
}
