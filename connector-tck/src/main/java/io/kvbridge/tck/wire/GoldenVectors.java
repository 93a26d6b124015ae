package io.kvbridge.tck.wire;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The golden vectors of the wire format, read from {@code golden-vectors.txt}: one vector per line,
 * {@code <name> <hex bytes>}, {@code #} starts a comment. The names are those of {@link
 * GoldenValues}.
 */
public final class GoldenVectors {

  /** The resource that holds the vectors, beside this class. */
  public static final String RESOURCE = "golden-vectors.txt";

  private GoldenVectors() {}

  /** Every vector, by name, in file order. */
  public static Map<String, byte[]> load() {
    Map<String, byte[]> vectors = new LinkedHashMap<>();
    try (InputStream in = GoldenVectors.class.getResourceAsStream(RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException(RESOURCE + " is missing beside " + GoldenVectors.class);
      }
      BufferedReader lines = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
      for (String line = lines.readLine(); line != null; line = lines.readLine()) {
        String trimmed = line.strip();
        if (trimmed.isEmpty() || trimmed.startsWith("#")) {
          continue;
        }
        String[] parts = trimmed.split("\\s+");
        if (parts.length != 2 || vectors.put(parts[0], HexFormat.of().parseHex(parts[1])) != null) {
          throw new IllegalStateException("malformed or repeated vector line: " + trimmed);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return vectors;
  }
}
