package io.kvbridge.integrity;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/** The prompt digest as {@code docs/protocol.md} specifies it ("Prompt digest"). */
class PromptDigestTest {

  private static final int[] TOKENS = {0x01020304, -1, Integer.MIN_VALUE, 0x7f80ff00, 0, 42};

  @Test
  void theDigestOfTheGoldenPromptIsItsVector() {
    // connector-tck's golden vector digest.prompt: token ids 1 to 8.
    assertThat(PromptDigest.of(new int[] {1, 2, 3, 4, 5, 6, 7, 8}, 8))
        .isEqualTo("ac50bf92c3d7e4d5fdc3d6a220631bf4777a341e070604c506657645eaad3898");
  }

  @Test
  void theDigestIsSha256OfTheDomainTheCountAndEachTokenAsFourBigEndianBytes() throws Exception {
    assertThat(PromptDigest.of(TOKENS, TOKENS.length)).isEqualTo(expected(TOKENS));
  }

  @Test
  void onlyTheFirstCountTokensAreDigested() throws Exception {
    int[] firstThree = Arrays.copyOf(TOKENS, 3);

    assertThat(PromptDigest.of(TOKENS, 3))
        .isEqualTo(PromptDigest.of(firstThree, 3))
        .isEqualTo(expected(firstThree))
        .isNotEqualTo(PromptDigest.of(TOKENS, 4));
  }

  @Test
  void theDigestOfNoTokensCoversTheDomainAndACountOfZero() throws Exception {
    assertThat(PromptDigest.of(TOKENS, 0)).isEqualTo(expected(new int[0]));
  }

  @Test
  void aCountBeyondTheTokensOrBelowZeroIsRefused() {
    assertThatThrownBy(() -> PromptDigest.of(TOKENS, TOKENS.length + 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("cannot digest 7 of 6 prompt tokens");
    assertThatThrownBy(() -> PromptDigest.of(TOKENS, -1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("cannot digest -1 of 6 prompt tokens");
  }

  @Test
  void aDigestIsWellFormedAsSixtyFourLowercaseHexDigitsOnly() {
    String digest = PromptDigest.of(TOKENS, TOKENS.length);

    assertThat(PromptDigest.isWellFormed(digest)).isTrue();
    assertThat(PromptDigest.isWellFormed("0123456789abcdef".repeat(4))).isTrue();
    assertThat(PromptDigest.isWellFormed(null)).isFalse();
    assertThat(PromptDigest.isWellFormed(digest.substring(1))).isFalse();
    assertThat(PromptDigest.isWellFormed(digest + "0")).isFalse();
    assertThat(PromptDigest.isWellFormed(digest.toUpperCase(java.util.Locale.ROOT))).isFalse();
    // Each character just outside the ranges 0-9 and a-f, in the last place.
    for (char c : new char[] {'/', ':', '`', 'g', 'A', ' '}) {
      assertThat(PromptDigest.isWellFormed(digest.substring(0, 63) + c)).as("'%s'", c).isFalse();
    }
  }

  /** The digest written out from the protocol's byte encoding. */
  private static String expected(int[] tokens) throws Exception {
    byte[] domain = "kvbridge/prompt/1".getBytes(StandardCharsets.US_ASCII);
    ByteBuffer input = ByteBuffer.allocate(domain.length + 4 + 4 * tokens.length);
    input.put(domain).putInt(tokens.length);
    for (int token : tokens) {
      input.putInt(token);
    }
    return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(input.array()));
  }
}
