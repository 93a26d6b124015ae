package io.kvbridge.sample.completions;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import org.jspecify.annotations.Nullable;

/**
 * A streamed request's {@code stream_options}, after OpenAI's API.
 *
 * @param includeUsage {@code true}: the stream ends with a chunk of token counts and no choices
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record StreamOptions(@JsonProperty("include_usage") @Nullable Boolean includeUsage) {}
