package io.kvbridge.sample.completions;

import java.util.Collection;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.springframework.http.converter.HttpMessageNotReadableException;
import tools.jackson.core.JacksonException;
import tools.jackson.core.TokenStreamLocation;
import tools.jackson.core.exc.InputCoercionException;
import tools.jackson.core.exc.StreamConstraintsException;
import tools.jackson.core.exc.StreamReadException;
import tools.jackson.databind.exc.MismatchedInputException;

/**
 * What is wrong with a request body that could not be read, in the client's terms: the JSON field
 * and the type it must have, never the parser's message, which names Java types.
 *
 * @param param the request field at fault, if one is
 * @param message the reason, for people
 */
record UnreadableBody(@Nullable String param, String message) {

  /** How Jackson's parser reports a key given twice in one object. */
  private static final Pattern DUPLICATE_KEY =
      Pattern.compile("Duplicate Object property \"(.*)\"", Pattern.DOTALL);

  /** Describes why {@code e}'s body could not be read. */
  static UnreadableBody of(HttpMessageNotReadableException e) {
    JacksonException json = jacksonCause(e);
    if (json == null) {
      // Spring found no body at all, or the JSON literal null.
      return new UnreadableBody(null, "the body must be a single JSON object; it is empty or null");
    }
    String field = field(json.getPath());
    if (json instanceof StreamConstraintsException) {
      return new UnreadableBody(
          field, (field == null ? "a value in the body" : field) + " is too long to read");
    }
    if (json instanceof InputCoercionException && field != null) {
      return new UnreadableBody(field, field + " is out of range; it must fit the model's context");
    }
    if (json instanceof MismatchedInputException mismatch) {
      if (field == null) {
        // An array, a string, or a second value after the object.
        return new UnreadableBody(null, "the body must be a single JSON object");
      }
      Class<?> type = mismatch.getTargetType();
      return new UnreadableBody(
          field,
          type == null
              ? field + " has a value of the wrong type"
              : field + " must be " + expected(type));
    }
    String duplicate = duplicateKey(json);
    if (duplicate != null) {
      String key = field == null ? duplicate : field + "." + duplicate;
      return new UnreadableBody(
          key, key + " is given more than once; give each key of an object once");
    }
    if (json instanceof StreamReadException) {
      return new UnreadableBody(null, "the body is not valid JSON" + where(json.getLocation()));
    }
    return new UnreadableBody(field, "the body is not a valid completion request");
  }

  /**
   * The key a parser reading with {@code STRICT_DUPLICATE_DETECTION} found twice in one object, if
   * that is what {@code json} reports; the key only, its object's path is {@code json}'s.
   */
  private static @Nullable String duplicateKey(JacksonException json) {
    if (!(json instanceof StreamReadException)) {
      return null;
    }
    Matcher duplicate = DUPLICATE_KEY.matcher(String.valueOf(json.getOriginalMessage()));
    return duplicate.matches() ? duplicate.group(1) : null;
  }

  private static @Nullable JacksonException jacksonCause(Throwable e) {
    for (Throwable t = e.getCause(); t != null; t = t.getCause()) {
      if (t instanceof JacksonException json) {
        return json;
      }
    }
    return null;
  }

  /** The JSON path of the value at fault, e.g. {@code max_tokens}; null for the body itself. */
  private static @Nullable String field(List<JacksonException.Reference> path) {
    StringBuilder out = new StringBuilder();
    for (JacksonException.Reference ref : path) {
      if (ref.getPropertyName() != null) {
        out.append(out.isEmpty() ? "" : ".").append(ref.getPropertyName());
      } else if (ref.getIndex() >= 0) {
        out.append('[').append(ref.getIndex()).append(']');
      }
    }
    return out.isEmpty() ? null : out.toString();
  }

  /** The JSON type a value of {@code type} is read from, in words. */
  private static String expected(Class<?> type) {
    if (CharSequence.class.isAssignableFrom(type)) {
      return "a string";
    }
    if (type == Integer.class
        || type == int.class
        || type == Long.class
        || type == long.class
        || type == Short.class
        || type == short.class) {
      return "an integer";
    }
    if (type == Boolean.class || type == boolean.class) {
      return "a boolean (true or false)";
    }
    if (Number.class.isAssignableFrom(type) || type.isPrimitive()) {
      return "a number";
    }
    if (Collection.class.isAssignableFrom(type) || type.isArray()) {
      return "an array";
    }
    // A map or a record.
    return "an object";
  }

  private static String where(@Nullable TokenStreamLocation location) {
    if (location == null || location.getLineNr() < 1) {
      return "";
    }
    return " (line " + location.getLineNr() + ", column " + location.getColumnNr() + ")";
  }
}
