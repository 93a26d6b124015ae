package io.kvbridge.events;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class BlockHashesTest {

  private static final BlockHashes LLAMA = new BlockHashes("llama-3.1-8b", 4);

  @Test
  void onlyFullBlocksAreHashedAndEachHashCoversTheBlocksBeforeIt() {
    long[] whole = LLAMA.of(new int[] {1, 2, 3, 4, 5, 6, 7, 8, 9});
    long[] sharedStart = LLAMA.of(new int[] {1, 2, 3, 4, 50, 6, 7, 8});
    long[] otherStart = LLAMA.of(new int[] {0, 2, 3, 4, 5, 6, 7, 8});

    assertThat(whole).hasSize(2);
    assertThat(sharedStart[0]).isEqualTo(whole[0]);
    assertThat(sharedStart[1]).isNotEqualTo(whole[1]);
    // The same tokens after another first block are another prefix: another hash.
    assertThat(otherStart[1]).isNotEqualTo(whole[1]);
  }

  @Test
  void theModelAndTheBlockSizeAreInEveryHash() {
    int[] tokens = {1, 2, 3, 4, 5, 6, 7, 8};

    assertThat(new BlockHashes("qwen2.5-7b", 4).of(tokens)[0]).isNotEqualTo(LLAMA.of(tokens)[0]);
    assertThat(new BlockHashes("llama-3.1-8b", 8).of(tokens)[0]).isNotEqualTo(LLAMA.of(tokens)[1]);
  }

  @Test
  void theHashesAreTheSpecifiedSha256Chain() throws Exception {
    MessageDigest sha = MessageDigest.getInstance("SHA-256");
    sha.update("kvbridge/block-hash/1".getBytes(StandardCharsets.UTF_8));
    sha.update((byte) 0);
    sha.update("llama-3.1-8b".getBytes(StandardCharsets.UTF_8));
    sha.update((byte) 0);
    sha.update(ByteBuffer.allocate(4).putInt(4).array());
    long root = ByteBuffer.wrap(sha.digest()).getLong();
    ByteBuffer block = ByteBuffer.allocate(8 + 16).putLong(root);
    for (int t : new int[] {7, 8, 9, 10}) {
      block.putInt(t);
    }
    long first =
        ByteBuffer.wrap(MessageDigest.getInstance("SHA-256").digest(block.array())).getLong();

    assertThat(LLAMA.root()).isEqualTo(root);
    assertThat(LLAMA.of(new int[] {7, 8, 9, 10})).containsExactly(first);
    // The vector docs/events.md prints.
    assertThat(Arrays.stream(LLAMA.of(new int[] {7, 8, 9, 10})).mapToObj(EventFields::hex))
        .containsExactly(EventFields.hex(first));
  }

  @Test
  void aBlankModelOrAnEmptyBlockIsRefused() {
    assertThatThrownBy(() -> new BlockHashes(" ", 4))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("model");
    assertThatThrownBy(() -> new BlockHashes("m", 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("tokens per block");
  }
}
