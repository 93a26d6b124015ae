package io.kvbridge.runtime.consumer;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvbridge.integrity.ReadDigest;
import io.kvbridge.layout.KvLayout;
import io.kvbridge.observe.ConnectorObserver;
import io.kvbridge.runtime.engine.ConnectorCounters;
import io.kvbridge.runtime.engine.StubTransport;
import io.kvbridge.wire.ProtocolMessage;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What the consumer sends its producers, and what it reports when a message cannot be sent. */
class ConsumerRepliesTest {

  private final StubTransport transport = new StubTransport();
  private final List<String> failedNotifications = new ArrayList<>();
  private final ConnectorCounters counters =
      new ConnectorCounters(
          new ConnectorObserver() {
            @Override
            public void notificationFailed(String toEngineId, String message) {
              failedNotifications.add(toEngineId + " " + message);
            }
          });
  private final Load load = load();

  private static Load load() {
    Load load = TestLoads.oneBlock();
    load.confirmSent(
        TestLoads.oneRankProducer(KvLayout.opaque("m", 4, 4, 16), 0x9000),
        ReadDigest.fromBytes(new byte[32]),
        0,
        5L);
    return load;
  }

  @Test
  void messagesGoToTheProducersLeadAgent() throws Exception {
    assertThat(ConsumerReplies.sendConfirm(transport, "decode-0", counters, load, 5L)).isTrue();
    assertThat(ConsumerReplies.sendCompletion(transport, "decode-0", counters, load)).isTrue();

    assertThat(transport.sent).extracting(StubTransport.Sent::toAgent).containsExactly("p0", "p0");
    assertThat(ProtocolMessage.decode(transport.sent.get(1).message()))
        .isEqualTo(new ProtocolMessage.Completion(load.lease(), "decode-0", load.readDigest(), 0));
    assertThat(failedNotifications).isEmpty();
  }

  @Test
  void aMessageTheTransportRefusesIsReportedAsFailedAndCountedByKind() {
    transport.refuseNotifications = true;

    assertThat(ConsumerReplies.sendConfirm(transport, "decode-0", counters, load, 5L)).isFalse();
    assertThat(ConsumerReplies.sendCompletion(transport, "decode-0", counters, load)).isFalse();
    ConsumerReplies.sendRelease(transport, "decode-0", counters, load, "cancelled");

    assertThat(failedNotifications)
        .containsExactly("prefill-0 confirm", "prefill-0 completion", "prefill-0 release");
  }
}
