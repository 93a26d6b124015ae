package io.kvbridge.sample.completions;

import java.util.List;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.converter.json.JacksonJsonHttpMessageConverter;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.MapperFeature;
import tools.jackson.databind.cfg.CoercionAction;
import tools.jackson.databind.cfg.CoercionInputShape;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.type.LogicalType;

/**
 * How completion requests are read: strictly. Jackson's defaults coerce scalars ({@code "8"},
 * {@code 8.5} and {@code 1e8} become an integer, {@code true} a string, {@code "true"} or {@code 1}
 * a boolean); a {@link CompletionRequest} is read with a copy of the application's mapper that
 * coerces nothing (a {@link ChatCompletionRequest} and a {@link RevokeRequest} too), so a field of
 * another JSON type is refused and {@link CompletionErrors} answers 400 naming the field and the
 * type it must have. Nor does it take a key given twice in one object, at any depth (Jackson's
 * default keeps the last value, so {@code {"max_tokens": 100000000, "max_tokens": 1}} would pass a
 * check that reads the first): that is a 400 naming the key. Every other type, in either direction,
 * keeps the application's mapper and its {@code spring.jackson.*} settings.
 */
@Configuration(proxyBeanMethods = false)
public class CompletionJsonConfiguration {

  /**
   * The JSON converter of the server and of the REST clients, in place of the one Spring Boot would
   * configure: the application's mapper, and the strict one for completion requests.
   */
  @Bean
  public JacksonJsonHttpMessageConverter jacksonJsonHttpMessageConverter(JsonMapper mapper) {
    JacksonJsonHttpMessageConverter converter = new JacksonJsonHttpMessageConverter(mapper);
    JsonMapper strict = strict(mapper);
    // Every media type the converter reads: a type registered here but read as another would
    // fall through to a lenient converter.
    for (Class<?> body :
        List.of(CompletionRequest.class, ChatCompletionRequest.class, RevokeRequest.class)) {
      converter.registerMappersForType(
          body,
          mappers -> converter.getSupportedMediaTypes().forEach(type -> mappers.put(type, strict)));
    }
    return converter;
  }

  /**
   * A copy of {@code mapper} that reads each scalar only from its own JSON type and refuses a key
   * given twice in one object.
   */
  static JsonMapper strict(JsonMapper mapper) {
    return mapper
        .rebuild()
        // {"max_tokens": 1, "max_tokens": 2}, in the body or in any object inside it
        .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
        // "8" as a number, "true" or 1 as a boolean
        .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
        // 8.5 or 1e8 as an integer
        .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
        // true or 5 as a string: not covered by the feature above
        .withCoercionConfig(
            LogicalType.Textual,
            config ->
                config
                    .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail)
                    .setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
                    .setCoercion(CoercionInputShape.Float, CoercionAction.Fail))
        .build();
  }
}
