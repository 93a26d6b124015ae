package io.kvbridge.discovery.etcd;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import io.kvbridge.spi.Role;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * What an engine publishes about itself in etcd, as the JSON value of its key {@code
 * <prefix>/engines/<engine id>}:
 *
 * <pre>{@code
 * {"version":1,"engine_id":"prefill-0","role":"producer","incarnation":"5f3a9c0e12b4d7a1",
 *  "handshake_address":"tcp://10.0.0.5:7100","agent_name":"prefill-0-5f3a9c0e",
 *  "layout_fingerprint":"0c1d...","tp_degree":1,"free_blocks":812,"live_leases":3,
 *  "attributes":{"base_url":"http://10.0.0.5:8100"}}
 * }</pre>
 *
 * Fields a reader does not know are ignored, so later versions may add some; {@code
 * handshake_address} and {@code agent_name} are {@code null} when the engine has none (a consumer
 * answers no handshakes), {@code free_blocks} when the engine does not say. {@code attributes} are
 * what the application adds about the engine ({@link EngineAttributes}), such as where its HTTP API
 * is; written only when there are some.
 *
 * @param engineId the engine's id, the last segment of its key
 * @param role what the engine does
 * @param incarnation drawn afresh at every start of the engine; written in hexadecimal
 * @param handshakeAddress where the engine answers handshakes, if it is a producer
 * @param agentName the engine's transport agent name, if its connector says
 * @param layoutFingerprint the {@link io.kvbridge.layout.KvLayout#fingerprint()} of its KV cache:
 *     the model and memory order, the same on every rank whatever heads it holds and its block size
 * @param tensorParallelDegree how many ranks the engine's KV cache is split over, each holding an
 *     equal share of the KV heads
 * @param freeBlocks how many KV blocks the engine has free, if it says
 * @param liveLeases leases the engine holds for consumers
 * @param attributes what the application says about the engine, at most {@value #MAX_ATTRIBUTES}
 *     names of at most {@value #MAX_ATTRIBUTE_NAME} characters with values of at most {@value
 *     #MAX_ATTRIBUTE_VALUE}
 */
public record EngineRecord(
    String engineId,
    Role role,
    long incarnation,
    Optional<String> handshakeAddress,
    Optional<String> agentName,
    String layoutFingerprint,
    int tensorParallelDegree,
    OptionalInt freeBlocks,
    int liveLeases,
    Map<String, String> attributes) {

  /** The version of the JSON form written. */
  public static final int VERSION = 1;

  /** The most attributes a record carries. */
  public static final int MAX_ATTRIBUTES = 16;

  /** The longest attribute name, in characters. */
  public static final int MAX_ATTRIBUTE_NAME = 64;

  /** The longest attribute value, in characters. */
  public static final int MAX_ATTRIBUTE_VALUE = 1024;

  private static final JsonFactory JSON = new JsonFactory();

  /** Checks the values. */
  public EngineRecord {
    Objects.requireNonNull(engineId, "engineId");
    Objects.requireNonNull(role, "role");
    Objects.requireNonNull(handshakeAddress, "handshakeAddress");
    Objects.requireNonNull(agentName, "agentName");
    Objects.requireNonNull(layoutFingerprint, "layoutFingerprint");
    Objects.requireNonNull(freeBlocks, "freeBlocks");
    if (tensorParallelDegree < 1) {
      throw new IllegalArgumentException(
          "tp_degree must be at least 1, got " + tensorParallelDegree);
    }
    checkAttributes(attributes);
    attributes = Collections.unmodifiableMap(new LinkedHashMap<>(attributes));
  }

  /** A record without attributes. */
  public EngineRecord(
      String engineId,
      Role role,
      long incarnation,
      Optional<String> handshakeAddress,
      Optional<String> agentName,
      String layoutFingerprint,
      int tensorParallelDegree,
      OptionalInt freeBlocks,
      int liveLeases) {
    this(
        engineId,
        role,
        incarnation,
        handshakeAddress,
        agentName,
        layoutFingerprint,
        tensorParallelDegree,
        freeBlocks,
        liveLeases,
        Map.of());
  }

  /** Attribute {@code name}, if the record carries it. */
  public Optional<String> attribute(String name) {
    return Optional.ofNullable(attributes.get(name));
  }

  /**
   * Checks {@code attributes} against the limits.
   *
   * @throws IllegalArgumentException saying what is wrong
   */
  static void checkAttributes(Map<String, String> attributes) {
    String problem = attributesProblem(attributes);
    if (problem != null) {
      throw new IllegalArgumentException(problem);
    }
  }

  /** What is wrong with {@code attributes}, or {@code null} if nothing. */
  private static String attributesProblem(Map<String, String> attributes) {
    Objects.requireNonNull(attributes, "attributes");
    if (attributes.size() > MAX_ATTRIBUTES) {
      return "attributes may hold at most " + MAX_ATTRIBUTES + " names, got " + attributes.size();
    }
    for (Map.Entry<String, String> a : attributes.entrySet()) {
      if (a.getKey() == null || a.getKey().isEmpty() || a.getKey().length() > MAX_ATTRIBUTE_NAME) {
        return "attribute names must have 1 to " + MAX_ATTRIBUTE_NAME + " characters";
      }
      if (a.getValue() == null || a.getValue().length() > MAX_ATTRIBUTE_VALUE) {
        return "attribute "
            + a.getKey()
            + " must be a string of at most "
            + MAX_ATTRIBUTE_VALUE
            + " characters";
      }
    }
    return null;
  }

  /** The JSON form, in UTF-8. */
  public byte[] toJson() {
    StringWriter out = new StringWriter();
    try (JsonGenerator g = JSON.createGenerator(out)) {
      g.writeStartObject();
      g.writeNumberField("version", VERSION);
      g.writeStringField("engine_id", engineId);
      g.writeStringField("role", role.name().toLowerCase(Locale.ROOT));
      g.writeStringField("incarnation", Long.toHexString(incarnation));
      g.writeStringField("handshake_address", handshakeAddress.orElse(null));
      g.writeStringField("agent_name", agentName.orElse(null));
      g.writeStringField("layout_fingerprint", layoutFingerprint);
      g.writeNumberField("tp_degree", tensorParallelDegree);
      g.writeFieldName("free_blocks");
      if (freeBlocks.isPresent()) {
        g.writeNumber(freeBlocks.getAsInt());
      } else {
        g.writeNull();
      }
      g.writeNumberField("live_leases", liveLeases);
      if (!attributes.isEmpty()) {
        g.writeObjectFieldStart("attributes");
        for (Map.Entry<String, String> a : attributes.entrySet()) {
          g.writeStringField(a.getKey(), a.getValue());
        }
        g.writeEndObject();
      }
      g.writeEndObject();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write an engine record to memory", e);
    }
    return out.toString().getBytes(StandardCharsets.UTF_8);
  }

  /**
   * Reads the JSON form of the record stored under engine {@code engineId}'s key. The value comes
   * from etcd, which any process of the deployment may write: it is checked field by field.
   *
   * @throws MalformedEngineRecordException naming the field that is missing or malformed, or when
   *     the record names another engine than its key
   */
  public static EngineRecord fromJson(String engineId, byte[] json) {
    Fields f = new Fields();
    try (JsonParser p = JSON.createParser(json)) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        throw new MalformedEngineRecordException("it is not a JSON object");
      }
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String name = p.currentName();
        JsonToken value = p.nextToken();
        switch (name) {
          case "engine_id" -> f.engineId = text(name, value, p);
          case "role" -> f.role = text(name, value, p);
          case "incarnation" -> f.incarnation = text(name, value, p);
          case "handshake_address" -> f.handshakeAddress = text(name, value, p);
          case "agent_name" -> f.agentName = text(name, value, p);
          case "layout_fingerprint" -> f.layoutFingerprint = text(name, value, p);
          case "tp_degree" -> f.tpDegree = whole(name, value, p);
          case "free_blocks" -> f.freeBlocks = whole(name, value, p);
          case "live_leases" -> f.liveLeases = whole(name, value, p);
          case "attributes" -> f.attributes = attributes(value, p);
          default -> p.skipChildren();
        }
      }
      if (p.currentToken() != JsonToken.END_OBJECT || p.nextToken() != null) {
        throw new MalformedEngineRecordException("it is not one JSON object");
      }
    } catch (JsonProcessingException e) {
      throw new MalformedEngineRecordException("it is not JSON: " + e.getOriginalMessage(), e);
    } catch (IOException e) {
      throw new MalformedEngineRecordException("it cannot be read: " + e.getMessage(), e);
    }
    return f.toRecord(engineId);
  }

  private static String text(String name, JsonToken token, JsonParser p) throws IOException {
    if (token == JsonToken.VALUE_NULL) {
      return null;
    }
    if (token != JsonToken.VALUE_STRING) {
      throw new MalformedEngineRecordException(name + " must be a string");
    }
    return p.getText();
  }

  private static Map<String, String> attributes(JsonToken token, JsonParser p) throws IOException {
    if (token == JsonToken.VALUE_NULL) {
      return Map.of();
    }
    if (token != JsonToken.START_OBJECT) {
      throw new MalformedEngineRecordException("attributes must be an object of strings");
    }
    Map<String, String> attributes = new LinkedHashMap<>();
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String name = p.currentName();
      if (p.nextToken() != JsonToken.VALUE_STRING) {
        throw new MalformedEngineRecordException("attribute " + name + " must be a string");
      }
      attributes.put(name, p.getText());
    }
    String problem = attributesProblem(attributes);
    if (problem != null) {
      throw new MalformedEngineRecordException(problem);
    }
    return attributes;
  }

  private static Integer whole(String name, JsonToken token, JsonParser p) throws IOException {
    if (token == JsonToken.VALUE_NULL) {
      return null;
    }
    if (token != JsonToken.VALUE_NUMBER_INT
        || p.getNumberType() != JsonParser.NumberType.INT
        || p.getIntValue() < 0) {
      throw new MalformedEngineRecordException(name + " must be a whole number from 0");
    }
    return p.getIntValue();
  }

  /** The fields as read, each {@code null} until seen. */
  private static final class Fields {
    String engineId;
    String role;
    String incarnation;
    String handshakeAddress;
    String agentName;
    String layoutFingerprint;
    Integer tpDegree;
    Integer freeBlocks;
    Integer liveLeases;
    Map<String, String> attributes = Map.of();

    EngineRecord toRecord(String keyEngineId) {
      if (!keyEngineId.equals(engineId)) {
        throw new MalformedEngineRecordException(
            "engine_id '" + engineId + "' is not the engine of its key, '" + keyEngineId + "'");
      }
      String roleName = required("role", role);
      Role parsedRole;
      try {
        parsedRole = Role.valueOf(roleName.toUpperCase(Locale.ROOT));
      } catch (IllegalArgumentException e) {
        throw new MalformedEngineRecordException(
            "role '" + role + "' is not producer, consumer or both");
      }
      String incarnationHex = required("incarnation", incarnation);
      long parsedIncarnation;
      try {
        parsedIncarnation = Long.parseUnsignedLong(incarnationHex, 16);
      } catch (NumberFormatException e) {
        throw new MalformedEngineRecordException(
            "incarnation '" + incarnation + "' is not a 64-bit hexadecimal number");
      }
      if (required("tp_degree", tpDegree) < 1) {
        throw new MalformedEngineRecordException("tp_degree must be at least 1");
      }
      return new EngineRecord(
          engineId,
          parsedRole,
          parsedIncarnation,
          Optional.ofNullable(handshakeAddress),
          Optional.ofNullable(agentName),
          required("layout_fingerprint", layoutFingerprint),
          tpDegree,
          freeBlocks == null ? OptionalInt.empty() : OptionalInt.of(freeBlocks),
          required("live_leases", liveLeases),
          attributes);
    }

    private static <T> T required(String name, T value) {
      if (value == null) {
        throw new MalformedEngineRecordException(name + " is missing");
      }
      return value;
    }
  }
}
