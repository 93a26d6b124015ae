package io.kvbridge.tck.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.tck.ConnectorUnderTest;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.Transport;
import io.kvbridge.transfer.TransportException;
import java.util.Arrays;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * An agent's memory and metadata: what it allocates and registers, the name it goes by, and how it
 * loads, names and refuses a peer's metadata blob.
 */
public abstract class MemoryAndMetadataConformance extends TransportFixture {

  /** These tests, run against {@code connector}. */
  protected MemoryAndMetadataConformance(ConnectorUnderTest connector) {
    super(connector);
  }

  @Test
  void allocatedMemoryHasTheRequestedSizeAndTheTransportsKind() {
    Transport t = transport("agent");

    KvMemory memory = allocate(t);

    assertThat(memory.sizeBytes()).isEqualTo(REGION_BYTES);
    assertThat(memory.kind()).isEqualTo(t.memoryKind());
  }

  @Test
  void allocatedMemoryReadsBackWhatWasWritten() {
    KvMemory memory = allocate(transport("agent"));
    byte[] data = randomBytes(REGION_BYTES);

    fill(memory, 0, data);

    assertThat(contents(memory, 0, REGION_BYTES)).isEqualTo(data);
  }

  /**
   * A staged read's rows are copied into place between two memories of the transport (host: a copy
   * per row; device: {@code cudaMemcpy2D}): each row from its pitch to the target's, nothing else
   * written, and rows outside either memory refused before any byte moves.
   */
  @Test
  void rowsCopiedBetweenAllocatedMemoriesLandAtTheTargetsPitchAndNothingElseChanges() {
    Transport t = transport("agent");
    KvMemory from = allocate(t);
    KvMemory to = allocate(t);
    byte[] data = randomBytes(REGION_BYTES);
    byte[] before = randomBytes(REGION_BYTES);
    fill(from, 0, data);
    fill(to, 0, before);
    int width = 24;
    int rows = 5;

    from.copyRows(7, 64, to, 3, 40, width, rows);

    byte[] expected = before.clone();
    for (int row = 0; row < rows; row++) {
      System.arraycopy(data, 7 + row * 64, expected, 3 + row * 40, width);
    }
    assertThat(contents(to, 0, REGION_BYTES)).isEqualTo(expected);
    assertThatThrownBy(() -> from.copyRows(0, 64, to, REGION_BYTES - 40, 40, width, 2))
        .isInstanceOf(IndexOutOfBoundsException.class);
    assertThat(contents(to, 0, REGION_BYTES)).isEqualTo(expected);
  }

  @Test
  void allocatedMemoryCanBeRegistered() {
    Transport t = transport("agent");
    KvMemory memory = allocate(t);

    assertThatCode(() -> t.register(memory)).doesNotThrowAnyException();
  }

  @Test
  void agentNameIsTheNameItWasCreatedWith() {
    assertThat(transport("some-agent").agentName()).isEqualTo("some-agent");
  }

  @Test
  void loadingPeerMetadataReturnsThePeersAgentName() {
    Transport initiator = transport("initiator");
    Transport target = transport("target");
    registered(target);

    assertThat(initiator.loadRemoteMetadata(target.localMetadata())).isEqualTo("target");
  }

  @Test
  void aBlobNamesItsAgentWithoutBeingLoaded() {
    Transport initiator = transport("initiator");
    KvMemory local = registered(initiator);
    Transport target = transport("target");
    KvMemory remote = registered(target);

    assertThat(initiator.peerAgentName(target.localMetadata())).isEqualTo("target");
    assertThat(initiator.peerAgentName(initiator.localMetadata())).isEqualTo("initiator");
    assertAReadFromTargetIsRefused(initiator, local, remote);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("unnamedMetadata")
  void theAgentNameOfAMalformedBlobIsRefused(String what, MetadataDefect defect) {
    Transport initiator = transport("initiator");
    Transport target = transport("target");
    registered(target);
    byte[] blob = defect.apply(target.localMetadata(), random);

    assertThatThrownBy(() -> initiator.peerAgentName(blob)).isInstanceOf(TransportException.class);
  }

  /** Defects that leave no agent name to read (a truncated blob may still hold its whole name). */
  static Stream<Arguments> unnamedMetadata() {
    return malformedMetadata().limit(3);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("malformedMetadata")
  void malformedMetadataIsRefused(String what, MetadataDefect defect) {
    Transport initiator = transport("initiator");
    Transport target = transport("target");
    registered(target);
    byte[] blob = defect.apply(target.localMetadata(), random);

    assertThatThrownBy(() -> initiator.loadRemoteMetadata(blob))
        .isInstanceOf(TransportException.class);
  }

  static Stream<Arguments> malformedMetadata() {
    return Stream.of(
        Arguments.of("empty", (MetadataDefect) (valid, random) -> new byte[0]),
        Arguments.of("one byte", (MetadataDefect) (valid, random) -> new byte[] {1}),
        Arguments.of(
            "random bytes",
            (MetadataDefect)
                (valid, random) -> {
                  byte[] junk = new byte[valid.length];
                  random.nextBytes(junk);
                  return junk;
                }),
        Arguments.of(
            "first half of a valid blob",
            (MetadataDefect) (valid, random) -> Arrays.copyOf(valid, valid.length / 2)),
        Arguments.of(
            "valid blob missing its last byte",
            (MetadataDefect) (valid, random) -> Arrays.copyOf(valid, valid.length - 1)));
  }

  /** Turns a valid metadata blob into a malformed one. */
  @FunctionalInterface
  protected interface MetadataDefect {
    /** Returns the malformed blob. */
    byte[] apply(byte[] valid, Random random);
  }
}
