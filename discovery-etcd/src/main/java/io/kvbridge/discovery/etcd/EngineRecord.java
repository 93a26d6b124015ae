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
import java.util.Locale;
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
 *  "layout_fingerprint":"0c1d...","tp_degree":1,"free_blocks":812,"live_leases":3}
 * }</pre>
 *
 * Fields a reader does not know are ignored, so later versions may add some; {@code
 * handshake_address} and {@code agent_name} are {@code null} when the engine has none (a consumer
 * answers no handshakes), {@code free_blocks} when the engine does not say.
 *
 * @param engineId the engine's id, the last segment of its key
 * @param role what the engine does
 * @param incarnation drawn afresh at every start of the engine; written in hexadecimal
 * @param handshakeAddress where the engine answers handshakes, if it is a producer
 * @param agentName the engine's transport agent name, if its connector says
 * @param layoutFingerprint the {@link io.kvbridge.layout.KvLayout#fingerprint()} of its KV cache
 * @param tensorParallelDegree how many ranks the engine's KV cache is split over (1 for now)
 * @param freeBlocks how many KV blocks the engine has free, if it says
 * @param liveLeases leases the engine holds for consumers
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
    int liveLeases) {

  /** The version of the JSON form written. */
  public static final int VERSION = 1;

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
          required("live_leases", liveLeases));
    }

    private static <T> T required(String name, T value) {
      if (value == null) {
        throw new MalformedEngineRecordException(name + " is missing");
      }
      return value;
    }
  }
}
