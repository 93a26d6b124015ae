package io.kvbridge.nixl.capi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.kvbridge.nixl.testing.RequiresNixl;
import io.kvbridge.transfer.Descriptor;
import io.kvbridge.transfer.Notification;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.function.IntFunction;
import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.javacpp.Pointer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Two NIXL agents in one JVM, UCX over loopback, host memory: the binding against the library. */
@ExtendWith(RequiresNixl.class)
class NixlAgentTest {

  private static final int BLOCKS = 4;
  private static final int BLOCK = 64 * 1024;
  private static final Duration PATIENCE = Duration.ofSeconds(20);
  private static final IntFunction<RuntimeException> UNCOVERED =
      status -> new IllegalStateException("status " + status);

  private final Side a = new Side("binding-a");
  private final Side b = new Side("binding-b");

  @BeforeEach
  void connect() {
    a.open();
    b.open();
    assertThat(a.agent.loadRemoteMetadata(b.agent.localMetadata())).isEqualTo(b.agent.name());
    assertThat(b.agent.loadRemoteMetadata(a.agent.localMetadata())).isEqualTo(a.agent.name());
  }

  @AfterEach
  void close() {
    b.close();
    a.close();
  }

  @Test
  void theUcxPluginIsFoundAndServesHostAndDeviceMemory() {
    assertThat(a.agent.availablePlugins()).contains("UCX");
    NixlAgent.PluginInfo ucx = a.agent.pluginInfo("UCX");
    assertThat(ucx.memoryTypes()).contains(NixlCapi.MEM_DRAM, NixlCapi.MEM_VRAM);
    assertThat(ucx.defaults()).containsKey("ucx_error_handling_mode");
  }

  @Test
  void metadataIsABinaryBlobThatNamesItsAgent() {
    byte[] blob = a.agent.localMetadata();
    assertThat(blob).hasSizeGreaterThan(100).contains((byte) 0);
  }

  @Test
  void aReadCopiesEveryRemoteBlockByteExactAndNotifiesTheRemoteAgent() {
    b.fill(new Random(1));
    byte[] message = "read-done".getBytes();

    try (NixlTransfer read =
        a.agent.prepareTransfer(
            NixlCapi.XFER_OP_READ,
            NixlCapi.MEM_DRAM,
            a.blocks(0, 1, 2, 3),
            b.agent.name(),
            NixlCapi.MEM_DRAM,
            b.blocks(0, 1, 2, 3),
            Optional.of(message))) {
      assertThat(read.post()).isIn(NixlStatus.SUCCESS, NixlStatus.IN_PROG);
      await().atMost(PATIENCE).until(() -> read.status() == NixlStatus.SUCCESS);
    }

    assertThat(a.bytes()).isEqualTo(b.bytes());
    List<Notification> received = new ArrayList<>();
    await()
        .atMost(PATIENCE)
        .until(
            () -> {
              received.addAll(b.agent.takeNotifications());
              return !received.isEmpty();
            });
    assertThat(received).containsExactly(new Notification(a.agent.name(), message));
  }

  @Test
  void aWriteCopiesLocalBlocksIntoChosenRemoteBlocks() {
    a.fill(new Random(2));

    try (NixlTransfer write =
        b.agent.prepareTransfer(
            NixlCapi.XFER_OP_WRITE,
            NixlCapi.MEM_DRAM,
            b.blocks(3, 2),
            a.agent.name(),
            NixlCapi.MEM_DRAM,
            a.blocks(0, 1),
            Optional.of(new byte[] {'w'}))) {
      write.post();
      await().atMost(PATIENCE).until(() -> write.status() == NixlStatus.SUCCESS);
    }

    assertThat(b.block(3)).isEqualTo(a.block(0));
    assertThat(b.block(2)).isEqualTo(a.block(1));
    await().atMost(PATIENCE).until(() -> !a.agent.takeNotifications().isEmpty());
  }

  @Test
  void aTransferMadeFromPreparedListsCopiesTheChosenBlocksAndNotifies() {
    b.fill(new Random(3));
    byte[] message = "prepared".getBytes();
    try (NixlPreparedList local =
            a.agent.prepareList("", NixlCapi.MEM_DRAM, a.blocks(0, 1, 2, 3), UNCOVERED);
        NixlPreparedList remote =
            a.agent.prepareList(
                b.agent.name(), NixlCapi.MEM_DRAM, b.blocks(0, 1, 2, 3), UNCOVERED);
        NixlTransfer read =
            a.agent.makeTransfer(
                NixlCapi.XFER_OP_READ,
                local,
                new int[] {0, 3},
                remote,
                new int[] {2, 1},
                Optional.of(message))) {
      assertThat(read.post()).isIn(NixlStatus.SUCCESS, NixlStatus.IN_PROG);
      await().atMost(PATIENCE).until(() -> read.status() == NixlStatus.SUCCESS);
    }

    assertThat(a.block(0)).isEqualTo(b.block(2));
    assertThat(a.block(3)).isEqualTo(b.block(1));
    await().atMost(PATIENCE).until(() -> !b.agent.takeNotifications().isEmpty());
  }

  @Test
  void aTransferOutlivesTheListsItWasMadeFrom() {
    b.fill(new Random(4));
    NixlPreparedList local = a.agent.prepareList("", NixlCapi.MEM_DRAM, a.blocks(0, 1), UNCOVERED);
    NixlPreparedList remote =
        a.agent.prepareList(b.agent.name(), NixlCapi.MEM_DRAM, b.blocks(2, 3), UNCOVERED);
    try (NixlTransfer read =
        a.agent.makeTransfer(
            NixlCapi.XFER_OP_READ,
            local,
            new int[] {0, 1},
            remote,
            new int[] {0, 1},
            Optional.empty())) {
      local.close();
      remote.close();

      read.post();
      await().atMost(PATIENCE).until(() -> read.status() == NixlStatus.SUCCESS);
    }

    assertThat(a.block(0)).isEqualTo(b.block(2));
    assertThat(a.block(1)).isEqualTo(b.block(3));
  }

  @Test
  void preparingPeerMemoryOutsideItsRegistrationIsNotFound() {
    List<Descriptor> outside =
        List.of(new Descriptor(b.region.address() + b.region.length() + 4096, BLOCK, 0));

    assertThatThrownBy(
            () ->
                a.agent.prepareList(
                    b.agent.name(),
                    NixlCapi.MEM_DRAM,
                    outside,
                    status -> new IllegalStateException("status " + status)))
        .hasMessage("status " + NixlStatus.ERROR_NOT_FOUND);
  }

  @Test
  void closingTheAgentReleasesItsPreparedLists() {
    NixlPreparedList local = a.agent.prepareList("", NixlCapi.MEM_DRAM, a.blocks(0), UNCOVERED);
    a.agent.deregisterMemory(NixlCapi.MEM_DRAM, a.region);

    a.agent.close();
    a.agent = null;

    assertThat(local.isClosed()).isTrue();
  }

  @Test
  void notificationsAreBinarySafeAndArriveInOrderPerSender() {
    byte[] first = {'H', 'B', 0, 'x'};
    byte[] second = {};
    byte[] third = {(byte) 0xff, 0};
    a.agent.sendNotification(b.agent.name(), first);
    a.agent.sendNotification(b.agent.name(), second);
    a.agent.sendNotification(b.agent.name(), third);

    List<Notification> received = new ArrayList<>();
    await()
        .atMost(PATIENCE)
        .until(
            () -> {
              received.addAll(b.agent.takeNotifications());
              return received.size() >= 3;
            });
    assertThat(received)
        .containsExactly(
            new Notification(a.agent.name(), first),
            new Notification(a.agent.name(), second),
            new Notification(a.agent.name(), third));
  }

  @Test
  void takenNotificationsAreNotReturnedAgain() {
    a.agent.sendNotification(b.agent.name(), new byte[] {1});
    await().atMost(PATIENCE).until(() -> !b.agent.takeNotifications().isEmpty());

    assertThat(b.agent.takeNotifications()).isEmpty();
  }

  @Test
  void anUnknownPeerIsReportedAsNotFound() {
    assertThatThrownBy(() -> a.agent.sendNotification("nobody", new byte[] {1}))
        .isInstanceOfSatisfying(
            NixlException.class,
            e -> {
              assertThat(e.call()).isEqualTo("nixl_capi_gen_notif");
              assertThat(e.status()).isEqualTo(NixlStatus.ERROR_NOT_FOUND);
            })
        .hasMessageContaining("ERROR_NOT_FOUND");
  }

  @Test
  void remoteMemoryOutsideThePeersRegistrationIsNotFound() {
    assertThat(a.agent.checkRemote(b.agent.name(), NixlCapi.MEM_DRAM, b.blocks(0)))
        .isEqualTo(NixlStatus.SUCCESS);
    Descriptor outside = new Descriptor(b.base.address() + (long) BLOCKS * BLOCK, BLOCK, 0);

    assertThat(a.agent.checkRemote(b.agent.name(), NixlCapi.MEM_DRAM, List.of(outside)))
        .isEqualTo(NixlStatus.ERROR_NOT_FOUND);
  }

  @Test
  void anInvalidatedPeerCannotBeReached() {
    assertThat(a.agent.invalidateRemote(b.agent.name())).isEqualTo(NixlStatus.SUCCESS);

    assertThat(a.agent.checkRemote(b.agent.name(), NixlCapi.MEM_DRAM, b.blocks(0)))
        .isEqualTo(NixlStatus.ERROR_NOT_FOUND);
  }

  @Test
  void aMalformedMetadataBlobIsRefused() {
    assertThatThrownBy(() -> a.agent.loadRemoteMetadata(new byte[] {1, 2, 3}))
        .isInstanceOf(NixlException.class)
        .hasMessageContaining("nixl_capi_load_remote_md");
  }

  @Test
  void telemetryIsEmptyForAnAgentThatDoesNotCaptureIt() {
    try (NixlTransfer read =
        a.agent.prepareTransfer(
            NixlCapi.XFER_OP_READ,
            NixlCapi.MEM_DRAM,
            a.blocks(0),
            b.agent.name(),
            NixlCapi.MEM_DRAM,
            b.blocks(0),
            Optional.empty())) {
      read.post();
      await().atMost(PATIENCE).until(() -> read.status() == NixlStatus.SUCCESS);
      assertThat(read.telemetry()).isEmpty();
    }
  }

  @Test
  void telemetryReportsTheBytesAndDescriptorsOfAFinishedTransfer() {
    try (NixlAgent c = NixlAgent.create("binding-c", 100, true)) {
      c.createBackend("UCX", Map.of());
      Pointer buffer = Pointer.calloc(2 * BLOCK, 1);
      try {
        Descriptor region = new Descriptor(buffer.address(), 2 * BLOCK, 0);
        c.registerMemory(NixlCapi.MEM_DRAM, region);
        c.loadRemoteMetadata(b.agent.localMetadata());
        try (NixlTransfer read =
            c.prepareTransfer(
                NixlCapi.XFER_OP_READ,
                NixlCapi.MEM_DRAM,
                List.of(
                    new Descriptor(buffer.address(), BLOCK, 0),
                    new Descriptor(buffer.address() + BLOCK, BLOCK, 0)),
                b.agent.name(),
                NixlCapi.MEM_DRAM,
                b.blocks(1, 3),
                Optional.empty())) {
          read.post();
          await().atMost(PATIENCE).until(() -> read.status() == NixlStatus.SUCCESS);
          assertThat(read.telemetry())
              .hasValueSatisfying(
                  t -> {
                    assertThat(t.bytes()).isEqualTo(2L * BLOCK);
                    assertThat(t.descriptors()).isEqualTo(2);
                  });
        }
        c.deregisterMemory(NixlCapi.MEM_DRAM, region);
      } finally {
        Pointer.free(buffer);
      }
    }
  }

  /** One agent with a UCX backend and a registered host buffer of {@link #BLOCKS} blocks. */
  private static final class Side {
    final String name;
    NixlAgent agent;
    Pointer base;
    Descriptor region;

    Side(String name) {
      this.name = name;
    }

    void open() {
      agent = NixlAgent.create(name, 100, false);
      agent.createBackend("UCX", Map.of());
      base = Pointer.calloc((long) BLOCKS * BLOCK, 1);
      region = new Descriptor(base.address(), (long) BLOCKS * BLOCK, 0);
      agent.registerMemory(NixlCapi.MEM_DRAM, region);
    }

    List<Descriptor> blocks(int... ids) {
      List<Descriptor> out = new ArrayList<>();
      for (int id : ids) {
        out.add(new Descriptor(base.address() + (long) id * BLOCK, BLOCK, 0));
      }
      return out;
    }

    void fill(Random random) {
      byte[] content = new byte[BLOCKS * BLOCK];
      random.nextBytes(content);
      new BytePointer(base).put(content);
    }

    byte[] bytes() {
      byte[] out = new byte[BLOCKS * BLOCK];
      new BytePointer(base).get(out);
      return out;
    }

    byte[] block(int id) {
      byte[] out = new byte[BLOCK];
      new BytePointer(base).position((long) id * BLOCK).get(out);
      return out;
    }

    void close() {
      if (agent != null) {
        agent.deregisterMemory(NixlCapi.MEM_DRAM, region);
        agent.close();
      }
      if (base != null) {
        Pointer.free(base);
      }
    }
  }
}
