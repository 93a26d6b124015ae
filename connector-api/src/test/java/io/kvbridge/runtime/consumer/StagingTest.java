package io.kvbridge.runtime.consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvbridge.runtime.engine.StubTransport;
import io.kvbridge.spi.InvalidSettingException;
import io.kvbridge.spi.ReadStaging;
import io.kvbridge.transfer.ByteArrayMemory;
import io.kvbridge.transfer.ForwardingTransport;
import io.kvbridge.transfer.KvMemory;
import io.kvbridge.transfer.ReadCost;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A consumer rank's staging area hands out and takes back ranges without overlap and without losing
 * any; local copies of rows move exactly their rows; the cost model stages only when the
 * descriptors it saves cost more than the copy it adds.
 */
class StagingTest {

  private static final long AREA = ReadStaging.MIN_BYTES;

  private final List<KvMemory> registered = new ArrayList<>();

  @Test
  void rangesAreHandedOutFirstFitAlignedAndJoinAgainWhenGivenBack() {
    StagingArea area = area();

    long a = area.reserve(100).orElseThrow();
    long b = area.reserve(1_000).orElseThrow();
    long c = area.reserve(AREA - 128 - 1_024).orElseThrow();

    assertThat(a).isZero();
    assertThat(b).isEqualTo(128); // 100 bytes take 128: ranges stay 64-byte aligned
    assertThat(c).isEqualTo(128 + 1_024);
    assertThat(area.reserve(1)).as("the area is full").isEmpty();
    area.release(b, 1_000);
    assertThat(area.reserve(2_000)).as("a larger range does not fit the freed one").isEmpty();
    assertThat(area.reserve(1_024)).hasValue(b);
    area.release(b, 1_024);
    area.release(a, 100);
    area.release(c, AREA - 128 - 1_024);
    assertThat(area.reservedBytes()).isZero();
    assertThat(area.reserve(AREA)).as("every range joined again").hasValue(0);
  }

  @Test
  void aRangeGivenBackTwiceIsRefused() {
    StagingArea area = area();
    long at = area.reserve(4_096).orElseThrow();
    area.release(at, 4_096);

    assertThatThrownBy(() -> area.release(at, 4_096))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("already free");
  }

  @Test
  void theAreaIsRegisteredWithTheRanksTransportAndDeregisteredWhenClosed() {
    StagingArea area = area();
    assertThat(registered).containsExactly(area.memory());

    area.close();

    assertThat(registered).isEmpty();
  }

  @Test
  void copyingRowsMovesEachRowFromItsPitchToTheTargetsAndNothingElse() {
    ByteArrayMemory from = new ByteArrayMemory(new byte[64]);
    ByteArrayMemory to = new ByteArrayMemory(new byte[64]);
    for (int i = 0; i < 64; i++) {
      from.bytes()[i] = (byte) i;
    }

    // Three rows of 4 bytes, 10 apart from byte 2, landing 6 apart from byte 1.
    from.copyRows(2, 10, to, 1, 6, 4, 3);

    byte[] expected = new byte[64];
    for (int row = 0; row < 3; row++) {
      for (int b = 0; b < 4; b++) {
        expected[1 + row * 6 + b] = (byte) (2 + row * 10 + b);
      }
    }
    assertThat(to.bytes()).containsExactly(expected);
  }

  @Test
  void rowsOutsideEitherMemoryAreRefusedBeforeAnyByteIsCopied() {
    ByteArrayMemory from = new ByteArrayMemory(new byte[64]);
    ByteArrayMemory to = new ByteArrayMemory(new byte[16]);
    from.bytes()[0] = 7;

    assertThatThrownBy(() -> from.copyRows(0, 8, to, 0, 8, 8, 3))
        .isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(() -> from.copyRows(0, 4, to, 0, 8, 8, 2))
        .as("rows that overlap their neighbours")
        .isInstanceOf(IndexOutOfBoundsException.class);
    assertThat(to.bytes()).containsOnly(0);
  }

  @Test
  void measuredCopyCostsAreNeverNegative() {
    CopyCost cost = CopyCost.measure(new ByteArrayMemory(new byte[(int) CopyCost.MEASURE_BYTES]));

    assertThat(cost.nanosPerCopy()).isNotNegative();
    assertThat(cost.nanosPerRow()).isNotNegative();
    assertThat(cost.nanosPerByte()).isNotNegative();
    assertThat(cost.nanos(10, 100, 1_000)).isPositive();
  }

  @Test
  void theModelStagesWhenTheDescriptorsSavedCostMoreThanTheCopyAdded() {
    // A million 1-KiB pieces (a Llama-3.1-8B request of 8k tokens split between two ranks).
    TransferPlanner.StagingEstimate request =
        new TransferPlanner.StagingEstimate(
            1L << 20, 1L << 15, 1L << 30, 1L << 30, 1L << 15, 1L << 20);
    CopyCost memcpy = new CopyCost(100, 10, 0.16);

    StagingModel nixl = new StagingModel(ReadStaging.Mode.AUTO, new ReadCost(1_700, 0.4), memcpy);
    StagingModel cheapDescriptors =
        new StagingModel(ReadStaging.Mode.AUTO, new ReadCost(50, 0.18), memcpy);

    assertThat(nixl.stages(request)).isTrue();
    assertThat(nixl.stagedNanos(request)).isLessThan(nixl.inPlaceNanos(request) / 2);
    assertThat(cheapDescriptors.stages(request)).isFalse();
    assertThat(
            new StagingModel(ReadStaging.Mode.ALWAYS, new ReadCost(0, 0), memcpy).stages(request))
        .isTrue();
    assertThat(StagingModel.NEVER.stages(request)).isFalse();
  }

  @Test
  void aStagingAreaSmallerThanTheMinimumIsRefusedNamingTheProperty() {
    assertThatThrownBy(() -> new ReadStaging(ReadStaging.Mode.AUTO, 1 << 20))
        .isInstanceOf(InvalidSettingException.class)
        .hasMessageContaining("consumer.staging-bytes");
  }

  private StagingArea area() {
    return StagingArea.allocate(
        new ForwardingTransport(new StubTransport()) {
          @Override
          public KvMemory allocate(long sizeBytes) {
            return new ByteArrayMemory(new byte[Math.toIntExact(sizeBytes)]);
          }

          @Override
          public void register(KvMemory memory) {
            registered.add(memory);
          }

          @Override
          public void deregister(KvMemory memory) {
            registered.remove(memory);
          }
        },
        AREA,
        true);
  }
}
