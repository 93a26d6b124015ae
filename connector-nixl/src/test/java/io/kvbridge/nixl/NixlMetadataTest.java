package io.kvbridge.nixl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.nixl.testing.RequiresNixl;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.Transport;
import io.kvbridge.transfer.TransportException;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The agent name of a NIXL metadata blob, read without loading it: from what the real library
 * writes, and refusing what it would not write.
 */
@ExtendWith(RequiresNixl.class)
class NixlMetadataTest {

  @Test
  void theRealLibrarysBlobNamesTheAgentThatWroteIt() {
    try (Transport agent =
            NixlBackend.transport(
                "metadata-names-me", NixlOptions.defaults().withMemory(MemoryMode.DRAM));
        KvMemory memory = agent.allocate(1 << 16)) {
      agent.register(memory);

      assertThat(agent.peerAgentName(agent.localMetadata()))
          .isEqualTo(agent.agentName())
          .isEqualTo("metadata-names-me");
      agent.deregister(memory);
    }
  }

  @Test
  void aBlobAsNixlWritesItNamesItsAgent() {
    assertThat(NixlMetadata.agentName(blob("nixlSerDes|", "Agent", "prefill-0", "|", "rest")))
        .isEqualTo("prefill-0");
  }

  @Test
  void aBlobWithoutNixlsHeaderIsRefused() {
    assertThatThrownBy(() -> NixlMetadata.agentName(blob("KVBF", "Agent", "prefill-0", "|", "")))
        .isInstanceOf(TransportException.class)
        .hasMessageContaining("does not start with NIXL's header");
  }

  @Test
  void aBlobWhoseFirstFieldIsNotTheAgentIsRefused() {
    assertThatThrownBy(
            () -> NixlMetadata.agentName(blob("nixlSerDes|", "Conns", "prefill-0", "|", "")))
        .isInstanceOf(TransportException.class)
        .hasMessageContaining("first field is not the agent name");
  }

  @Test
  void aNameLongerThanTheBlobIsRefused() {
    byte[] blob = blob("nixlSerDes|", "Agent", "prefill-0", "|", "");
    ByteBuffer.wrap(blob).order(ByteOrder.LITTLE_ENDIAN).putLong(16, 500);

    assertThatThrownBy(() -> NixlMetadata.agentName(blob))
        .isInstanceOf(TransportException.class)
        .hasMessageContaining("ends inside the agent name");
  }

  @Test
  void aNameOfNoBytesOrOfAnImpossibleLengthIsRefused() {
    for (long length : new long[] {0, -1, NixlMetadata.MAX_NAME_BYTES + 1}) {
      byte[] blob = blob("nixlSerDes|", "Agent", "prefill-0", "|", "");
      ByteBuffer.wrap(blob).order(ByteOrder.LITTLE_ENDIAN).putLong(16, length);

      assertThatThrownBy(() -> NixlMetadata.agentName(blob))
          .as("length %s", Long.toUnsignedString(length))
          .isInstanceOf(TransportException.class)
          .hasMessageContaining("gives the agent name a length of");
    }
  }

  @Test
  void aNameNotFollowedByTheSeparatorIsRefused() {
    assertThatThrownBy(
            () -> NixlMetadata.agentName(blob("nixlSerDes|", "Agent", "prefill-0", ";", "")))
        .isInstanceOf(TransportException.class)
        .hasMessageContaining("not followed by the field separator");
  }

  @Test
  void aBlobThatEndsInsideTheLengthIsRefused() {
    byte[] blob = "nixlSerDes|Agent\u0009\0".getBytes(StandardCharsets.US_ASCII);

    assertThatThrownBy(() -> NixlMetadata.agentName(blob))
        .isInstanceOf(TransportException.class)
        .hasMessageContaining("ends inside the agent name's length");
  }

  /** A blob of {@code header}, {@code tag}, {@code name}'s length and bytes, {@code separator}. */
  private static byte[] blob(
      String header, String tag, String name, String separator, String rest) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.writeBytes(header.getBytes(StandardCharsets.US_ASCII));
    out.writeBytes(tag.getBytes(StandardCharsets.US_ASCII));
    byte[] utf8 = name.getBytes(StandardCharsets.UTF_8);
    out.writeBytes(
        ByteBuffer.allocate(Long.BYTES)
            .order(ByteOrder.LITTLE_ENDIAN)
            .putLong(utf8.length)
            .array());
    out.writeBytes(utf8);
    out.writeBytes(separator.getBytes(StandardCharsets.US_ASCII));
    out.writeBytes(rest.getBytes(StandardCharsets.US_ASCII));
    return out.toByteArray();
  }
}
