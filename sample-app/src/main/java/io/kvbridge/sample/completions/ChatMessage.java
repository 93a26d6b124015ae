package io.kvbridge.sample.completions;

import org.jspecify.annotations.Nullable;

/**
 * One message of a chat, after OpenAI's chat completions API: text content only.
 *
 * @param role {@code system}, {@code user} or {@code assistant}
 * @param content the message's text
 */
public record ChatMessage(@Nullable String role, @Nullable String content) {}
