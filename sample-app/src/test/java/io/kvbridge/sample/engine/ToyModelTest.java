package io.kvbridge.sample.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class ToyModelTest {

  private final ToyModel model = new ToyModel(8);

  @Test
  void tokensAreThePromptsUtf8Bytes() {
    assertThat(model.tokenize("aé")).containsExactly('a', 0xC3, 0xA9);
  }

  @Test
  void theSamePromptAlwaysGivesTheSameKvAndCompletion() {
    String prompt = "the same prompt, twice";

    assertThat(model.computeAllKv(model.tokenize(prompt)))
        .isEqualTo(new ToyModel(8).computeAllKv(model.tokenize(prompt)));
    assertThat(model.referenceCompletion(prompt, 12))
        .isEqualTo(new ToyModel(8).referenceCompletion(prompt, 12));
  }

  @Test
  void aTokensKvDependsOnItsWholePrefixAndNothingAfterIt() {
    byte[] base = model.computeAllKv(model.tokenize("abcdef"));
    byte[] earlyChange = model.computeAllKv(model.tokenize("Xbcdef"));
    byte[] lateChange = model.computeAllKv(model.tokenize("abcdeX"));

    for (int token = 0; token < 6; token++) {
      assertThat(slice(earlyChange, token)).isNotEqualTo(slice(base, token));
    }
    for (int token = 0; token < 5; token++) {
      assertThat(slice(lateChange, token)).isEqualTo(slice(base, token));
    }
  }

  @Test
  void kvComputedInPiecesEqualsKvComputedAtOnce() {
    int[] tokens = model.tokenize("a prompt computed in two pieces");
    byte[] whole = model.computeAllKv(tokens);
    byte[] pieces = new byte[whole.length];

    ToyModel.KvSink into = (i, kv) -> System.arraycopy(kv, 0, pieces, i * 8, 8);
    model.computeKv(tokens, 16, tokens.length, into);
    model.computeKv(tokens, 0, 16, into);

    assertThat(pieces).isEqualTo(whole);
  }

  @Test
  void flippingAnyBitOfAnyKvByteChangesTheCompletion() {
    byte[] kv = model.computeAllKv(model.tokenize("every byte of the KV counts"));
    List<String> expected = model.generate(kv, 8);

    for (int position = 0; position < kv.length; position++) {
      for (int bit = 0; bit < 8; bit++) {
        byte[] corrupted = kv.clone();
        corrupted[position] ^= (byte) (1 << bit);
        assertThat(model.generate(corrupted, 8))
            .as("byte %d bit %d flipped", position, bit)
            .isNotEqualTo(expected);
      }
    }
  }

  @Test
  void aMissingTrailingByteChangesTheCompletion() {
    byte[] kv = model.computeAllKv(model.tokenize("nothing may be missing"));

    assertThat(model.generate(Arrays.copyOf(kv, kv.length - 1), 8))
        .isNotEqualTo(model.generate(kv, 8));
  }

  @Test
  void generatesExactlyMaxTokensWords() {
    byte[] kv = model.computeAllKv(model.tokenize("how many words"));

    assertThat(model.generate(kv, 5)).hasSize(5);
    assertThat(ToyModel.text(model.generate(kv, 5))).startsWith(" ");
  }

  @Test
  void aLongerCompletionExtendsTheShorterOne() {
    byte[] kv = model.computeAllKv(model.tokenize("first token first"));

    assertThat(model.generate(kv, 6)).startsWith(model.generate(kv, 1).get(0));
  }

  private static byte[] slice(byte[] kv, int token) {
    return Arrays.copyOfRange(kv, token * 8, (token + 1) * 8);
  }
}
