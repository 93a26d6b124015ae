package io.kvbridge.fake;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.transfer.MemoryKind;
import io.kvbridge.transfer.TransportException;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class AgentMetadataTest {

  private static final AgentMetadata.Region REGION =
      new AgentMetadata.Region(0x1000, 4096, 0, MemoryKind.DRAM, "");

  @Test
  void encodedMetadataDecodesToTheSameValue() {
    AgentMetadata metadata =
        new AgentMetadata(
            "fabric",
            "agent",
            7,
            List.of(REGION, new AgentMetadata.Region(0x9000, 64, 1, MemoryKind.VRAM, "r.kv")));

    assertThat(AgentMetadata.decode(metadata.encode())).isEqualTo(metadata);
  }

  @Test
  void trailingBytesAreRefused() {
    byte[] blob = new AgentMetadata("fabric", "agent", 1, List.of(REGION)).encode();

    assertThatThrownBy(() -> AgentMetadata.decode(Arrays.copyOf(blob, blob.length + 1)))
        .isInstanceOf(TransportException.class)
        .hasMessageContaining("1 unexpected trailing bytes");
  }

  @Test
  void overlappingRegionsAreRefused() {
    byte[] blob =
        new AgentMetadata(
                "fabric",
                "agent",
                1,
                List.of(REGION, new AgentMetadata.Region(0x1800, 4096, 0, MemoryKind.DRAM, "")))
            .encode();

    assertThatThrownBy(() -> AgentMetadata.decode(blob)).hasMessageContaining("overlap");
  }

  @Test
  void aHugeRegionCountIsRefusedBeforeAllocatingAnything() throws IOException {
    byte[] blob = header("agent", 1).writeInt(Integer.MAX_VALUE).bytes();

    assertThatThrownBy(() -> AgentMetadata.decode(blob))
        .isInstanceOf(TransportException.class)
        .hasMessageContaining("claims " + Integer.MAX_VALUE + " regions");
  }

  @Test
  void regionOfNonPositiveLengthIsRefused() throws IOException {
    byte[] blob = header("agent", 1).writeInt(1).region(0x1000, 0, 0, 0, "").bytes();

    assertThatThrownBy(() -> AgentMetadata.decode(blob)).hasMessageContaining("impossible");
  }

  @Test
  void regionRunningPastTheAddressSpaceIsRefused() throws IOException {
    byte[] blob = header("agent", 1).writeInt(1).region(Long.MAX_VALUE - 1, 2, 0, 0, "").bytes();

    assertThatThrownBy(() -> AgentMetadata.decode(blob)).hasMessageContaining("impossible");
  }

  @Test
  void unknownMemoryKindIsRefused() throws IOException {
    byte[] blob = header("agent", 1).writeInt(1).region(0x1000, 64, 0, 9, "").bytes();

    assertThatThrownBy(() -> AgentMetadata.decode(blob))
        .hasMessageContaining("unknown memory kind 9");
  }

  @Test
  void fileNameOutsideTheAgentsDirectoryIsRefused() throws IOException {
    byte[] blob = header("agent", 1).writeInt(1).region(0x1000, 64, 0, 0, "../x").bytes();

    assertThatThrownBy(() -> AgentMetadata.decode(blob))
        .hasMessageContaining("outside the agent's directory");
  }

  @Test
  void agentNameThatIsNotUtf8IsRefused() throws IOException {
    Blob blob = new Blob();
    blob.out.write(new byte[] {'K', 'V', 'B', 'F', 1});
    blob.text("fabric");
    blob.out.writeShort(2);
    blob.out.write(new byte[] {(byte) 0xC3, (byte) 0x28});

    assertThatThrownBy(() -> AgentMetadata.decode(blob.bytes()))
        .hasMessageContaining("agent name is not valid UTF-8");
  }

  @Test
  void otherVersionIsRefusedNamingIt() throws IOException {
    Blob blob = new Blob();
    blob.out.write(new byte[] {'K', 'V', 'B', 'F', 2});

    assertThatThrownBy(() -> AgentMetadata.decode(blob.bytes())).hasMessageContaining("version 2");
  }

  private static Blob header(String agent, long instance) throws IOException {
    Blob blob = new Blob();
    blob.out.write(new byte[] {'K', 'V', 'B', 'F', 1});
    blob.text("fabric");
    blob.text(agent);
    blob.out.writeLong(instance);
    return blob;
  }

  /** Writes blobs field by field, defects included. */
  private static final class Blob {
    final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    final DataOutputStream out = new DataOutputStream(bytes);

    Blob text(String s) throws IOException {
      byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
      out.writeShort(utf8.length);
      out.write(utf8);
      return this;
    }

    Blob writeInt(int v) throws IOException {
      out.writeInt(v);
      return this;
    }

    Blob region(long address, long length, int device, int kind, String file) throws IOException {
      out.writeLong(address);
      out.writeLong(length);
      out.writeInt(device);
      out.writeByte(kind);
      return text(file);
    }

    byte[] bytes() {
      return bytes.toByteArray();
    }
  }
}
