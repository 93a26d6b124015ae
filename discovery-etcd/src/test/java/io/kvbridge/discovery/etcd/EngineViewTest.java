package io.kvbridge.discovery.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.spi.Role;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

/** When a listing after a gap in the watch proves a peer gone, and when it proves nothing. */
class EngineViewTest {

  private static final long CLUSTER = 0x1234;

  private final EngineView view = new EngineView();

  @Test
  void firstListingMakesNobodyGone() {
    assertThat(view.replace(listing(CLUSTER, 10, key("prefill-0", 5)))).isEmpty();
    assertThat(view.records()).containsOnlyKeys("prefill-0");
  }

  @Test
  void keyMissingFromALaterListingOfTheSameClusterWasDeleted() {
    view.replace(listing(CLUSTER, 10, key("prefill-0", 5), key("decode-0", 6)));

    List<String> gone = view.replace(listing(CLUSTER, 20, key("decode-0", 6)));

    assertThat(gone).containsExactly("prefill-0");
    assertThat(view.records()).containsOnlyKeys("decode-0");
  }

  @Test
  void keyCreatedAnewSinceItWasSeenWasDeletedInBetween() {
    view.replace(listing(CLUSTER, 10, key("prefill-0", 5)));

    assertThat(view.replace(listing(CLUSTER, 20, key("prefill-0", 15))))
        .containsExactly("prefill-0");
  }

  @Test
  void keyRewrittenSinceItWasSeenIsNotGone() {
    view.replace(listing(CLUSTER, 10, key("prefill-0", 5)));
    view.put(key("prefill-0", 5), 12);

    assertThat(view.replace(listing(CLUSTER, 20, key("prefill-0", 5)))).isEmpty();
  }

  @Test
  void listingOfAnotherClusterProvesNothing() {
    view.replace(listing(CLUSTER, 10, key("prefill-0", 5)));

    assertThat(view.replace(listing(CLUSTER + 1, 30))).isEmpty();
    assertThat(view.records()).isEmpty();
  }

  @Test
  void listingOlderThanWhatWasSeenProvesNothing() {
    view.replace(listing(CLUSTER, 10, key("prefill-0", 5)));
    view.put(key("decode-0", 11), 11);

    assertThat(view.replace(listing(CLUSTER, 4))).isEmpty();
  }

  @Test
  void keyDeletedOnTheWatchLeavesTheView() {
    view.replace(listing(CLUSTER, 10, key("prefill-0", 5)));

    assertThat(view.delete("prefill-0", 11)).isPresent();

    assertThat(view.find("prefill-0")).isEmpty();
    assertThat(view.replace(listing(CLUSTER, 12))).isEmpty();
  }

  @Test
  void unreadableKeyIsHeldButHasNoRecord() {
    view.replace(listing(CLUSTER, 10, new EngineView.StoredKey("odd-0", Optional.empty(), 3)));

    assertThat(view.size()).isEqualTo(1);
    assertThat(view.records()).isEmpty();
    assertThat(view.replace(listing(CLUSTER, 11))).containsExactly("odd-0");
  }

  private static EngineView.Listing listing(
      long cluster, long revision, EngineView.StoredKey... keys) {
    return new EngineView.Listing(cluster, revision, List.of(keys));
  }

  private static EngineView.StoredKey key(String engineId, long createRevision) {
    return new EngineView.StoredKey(
        engineId,
        Optional.of(
            new EngineRecord(
                engineId,
                Role.PRODUCER,
                42,
                Optional.of("tcp://127.0.0.1:7000"),
                Optional.empty(),
                "fp",
                1,
                OptionalInt.empty(),
                0)),
        createRevision);
  }
}
