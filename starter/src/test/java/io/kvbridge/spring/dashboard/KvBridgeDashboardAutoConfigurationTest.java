package io.kvbridge.spring.dashboard;

import static io.kvbridge.spring.StartupFailures.invalidProperty;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.spring.KvBridgeAutoConfiguration;
import io.kvbridge.spring.actuate.KvBridgeEndpointAutoConfiguration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.endpoint.web.WebEndpointAutoConfiguration;
import org.springframework.boot.actuate.endpoint.web.PathMappedEndpoints;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.http.converter.autoconfigure.HttpMessageConvertersAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableWebApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.webmvc.autoconfigure.DispatcherServletAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.http.converter.json.JacksonJsonHttpMessageConverter;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.request.MockHttpServletRequestBuilder;
import org.springframework.test.web.servlet.request.MockMvcRequestBuilders;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

/**
 * The dashboard is served only when asked for, from the starter's own files, and its settings tell
 * the page where the {@code kvbridge} endpoint is, or why it cannot read it.
 */
class KvBridgeDashboardAutoConfigurationTest {

  private static final String PAGE = KvBridgeDashboard.PATH + "/";

  private final WebApplicationContextRunner web =
      new WebApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  KvBridgeAutoConfiguration.class,
                  KvBridgeEndpointAutoConfiguration.class,
                  EndpointAutoConfiguration.class,
                  WebEndpointAutoConfiguration.class,
                  JacksonAutoConfiguration.class,
                  HttpMessageConvertersAutoConfiguration.class,
                  DispatcherServletAutoConfiguration.class,
                  WebMvcAutoConfiguration.class,
                  KvBridgeDashboardAutoConfiguration.class));

  private final WebApplicationContextRunner enabled =
      web.withPropertyValues(
          "kvbridge.dashboard.enabled=true",
          "management.endpoints.web.exposure.include=health,kvbridge");

  // ---------------------------------------------------------------- on only when asked

  @Test
  void theDashboardIsOffUnlessEnabled() {
    web.withPropertyValues("management.endpoints.web.exposure.include=kvbridge")
        .run(
            context -> {
              assertThat(context).hasNotFailed().doesNotHaveBean(KvBridgeDashboard.class);
              assertThat(get(context, PAGE).getStatus()).isEqualTo(404);
            });
  }

  @Test
  void anApplicationThatIsNotAWebApplicationGetsNoDashboard() {
    new ApplicationContextRunner()
        .withConfiguration(
            AutoConfigurations.of(
                KvBridgeAutoConfiguration.class, KvBridgeDashboardAutoConfiguration.class))
        .withPropertyValues("kvbridge.dashboard.enabled=true")
        .run(
            context -> assertThat(context).hasNotFailed().doesNotHaveBean(KvBridgeDashboard.class));
  }

  // ---------------------------------------------------------------- what it serves

  @Test
  void thePageItsScriptAndItsStyleSheetAreServedFromTheStarter() {
    enabled.run(
        context -> {
          MockHttpServletResponse page = get(context, PAGE);
          assertThat(page.getStatus()).isEqualTo(200);
          assertThat(page.getContentType()).startsWith("text/html");
          assertThat(page.getContentAsString())
              .contains("<script src=\"dashboard.js\"", "href=\"dashboard.css\"");

          MockHttpServletResponse script = get(context, PAGE + "dashboard.js");
          assertThat(script.getStatus()).isEqualTo(200);
          assertThat(script.getContentType()).contains("javascript");
          assertThat(script.getContentAsString()).contains("settings.json");

          MockHttpServletResponse style = get(context, PAGE + "dashboard.css");
          assertThat(style.getStatus()).isEqualTo(200);
          assertThat(style.getContentType()).startsWith("text/css");
        });
  }

  @Test
  void anApplicationsOwnJsonConverterChangesNothingTheDashboardServes() {
    enabled
        .withBean(
            JacksonJsonHttpMessageConverter.class,
            () -> new JacksonJsonHttpMessageConverter(JsonMapper.shared()))
        .run(
            context -> {
              MockHttpServletResponse script =
                  perform(context, MockMvcRequestBuilders.get(PAGE + "dashboard.js").accept("*/*"));
              assertThat(script.getContentType()).startsWith("text/javascript");
              assertThat(script.getContentAsString()).startsWith("// The kvbridge dashboard");
              assertThat(settings(context, "", "")).containsEntry("pollIntervalMillis", 1000);
            });
  }

  @Test
  void thePageLoadsNothingFromAnotherServer() {
    enabled.run(
        context -> {
          for (String file : new String[] {"", "dashboard.js", "dashboard.css"}) {
            assertThat(get(context, PAGE + file).getContentAsString())
                .as(file)
                .doesNotContain("http://", "https://", "//cdn");
          }
        });
  }

  @Test
  void theBarePathRedirectsToThePage() {
    enabled.run(
        context -> {
          MockHttpServletResponse response = get(context, KvBridgeDashboard.PATH);

          assertThat(response.getStatus()).isEqualTo(307);
          assertThat(response.getHeader("Location")).isEqualTo("dashboard/");
        });
  }

  // ---------------------------------------------------------------- where the endpoint is

  @Test
  void theSettingsNameTheEndpointThePollIntervalAndTheHistorySize() {
    enabled
        .withPropertyValues(
            "kvbridge.dashboard.poll-interval=250ms", "kvbridge.dashboard.history-size=40")
        .run(
            context ->
                assertThat(settings(context, "", ""))
                    .containsExactlyInAnyOrderEntriesOf(
                        Map.of(
                            "pollIntervalMillis", 250,
                            "historySize", 40,
                            "endpoint", "/actuator/kvbridge")));
  }

  @Test
  void byDefaultThePageReadsEverySecondAndChartsFiveMinutes() {
    enabled.run(
        context ->
            assertThat(settings(context, "", ""))
                .containsEntry("pollIntervalMillis", 1000)
                .containsEntry("historySize", 300));
  }

  @Test
  void theEndpointPathFollowsTheManagementBasePathItsMappingAndTheContextPath() {
    enabled
        .withPropertyValues(
            "management.endpoints.web.base-path=/manage",
            "management.endpoints.web.path-mapping.kvbridge=kv")
        .run(
            context ->
                assertThat(settings(context, "/app", "/app"))
                    .containsEntry("endpoint", "/app/manage/kv"));
  }

  @Test
  void anEndpointThatIsNotExposedIsExplainedOnThePage() {
    enabled
        .withPropertyValues("management.endpoints.web.exposure.include=health")
        .run(
            context ->
                assertThat(settings(context, "", ""))
                    .containsEntry("endpoint", null)
                    .containsEntry("unreachable", KvBridgeDashboardAutoConfiguration.NOT_EXPOSED));
  }

  @Test
  void anEndpointOnASeparateManagementPortIsExplainedOnThePage() {
    enabled
        .withPropertyValues("management.server.port=9123")
        .run(
            context ->
                assertThat((String) settings(context, "", "").get("unreachable"))
                    .contains("management.server.port=9123"));
  }

  @Test
  void withoutActuatorThePageSaysWhatToAdd() {
    enabled
        .withClassLoader(new FilteredClassLoader(PathMappedEndpoints.class))
        .run(
            context ->
                assertThat(settings(context, "", ""))
                    .containsEntry("endpoint", null)
                    .containsEntry("unreachable", KvBridgeDashboardAutoConfiguration.NO_ACTUATOR));
  }

  // ---------------------------------------------------------------- bad values

  @Test
  void aPollIntervalBelowATenthOfASecondStopsStartUpNamingTheProperty() {
    enabled
        .withPropertyValues("kvbridge.dashboard.poll-interval=50ms")
        .run(
            context ->
                assertThat(invalidProperty(context))
                    .hasMessage(
                        "kvbridge.dashboard.poll-interval (50ms) must be from 100ms to 1m, e.g. 1s"));
  }

  @Test
  void aHistorySizeOutsideItsRangeStopsStartUpNamingTheProperty() {
    enabled
        .withPropertyValues("kvbridge.dashboard.history-size=5")
        .run(
            context ->
                assertThat(invalidProperty(context))
                    .hasMessage(
                        "kvbridge.dashboard.history-size (5) must be from 10 to 3600, e.g. 300"));
  }

  // ---------------------------------------------------------------- helpers

  private static MockHttpServletResponse get(AssertableWebApplicationContext context, String path)
      throws Exception {
    return perform(context, MockMvcRequestBuilders.get(path));
  }

  private static Map<String, Object> settings(
      AssertableWebApplicationContext context, String prefix, String contextPath) throws Exception {
    MockHttpServletResponse response =
        perform(
            context,
            MockMvcRequestBuilders.get(prefix + PAGE + "settings.json").contextPath(contextPath));
    assertThat(response.getStatus()).isEqualTo(200);
    assertThat(response.getContentType()).startsWith("application/json");
    return JsonMapper.shared()
        .readValue(response.getContentAsString(), new TypeReference<Map<String, Object>>() {});
  }

  private static MockHttpServletResponse perform(
      AssertableWebApplicationContext context, MockHttpServletRequestBuilder request)
      throws Exception {
    assertThat(context).hasNotFailed();
    MockMvc mvc = MockMvcBuilders.webAppContextSetup(context).build();
    return mvc.perform(request).andReturn().getResponse();
  }
}
