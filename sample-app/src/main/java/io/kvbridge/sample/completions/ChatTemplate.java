package io.kvbridge.sample.completions;

import java.util.List;
import java.util.Set;

/**
 * How a chat becomes the toy model's prompt: each message as {@code <|role|>} on a line of its own
 * followed by its content and a newline, then {@code <|assistant|>} and a newline, which the
 * completion continues. Like a real model's template, the same chat always gives the same prompt,
 * so a chat is prefilled, transferred and cached as any prompt is.
 */
public final class ChatTemplate {

  /** The roles a message may have. */
  public static final Set<String> ROLES = Set.of("system", "user", "assistant");

  private ChatTemplate() {}

  /** The prompt of {@code messages}, which must have been checked. */
  public static String prompt(List<ChatMessage> messages) {
    StringBuilder out = new StringBuilder();
    for (ChatMessage message : messages) {
      out.append("<|").append(message.role()).append("|>\n").append(message.content()).append('\n');
    }
    return out.append("<|assistant|>\n").toString();
  }
}
