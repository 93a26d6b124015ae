package io.kvbridge.transfer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * What the core asks of a backend, and when: refusals come before the backend sees anything, and
 * the books are wound down in the order a backend's resources depend on each other.
 */
class AgentCoreTest {

  private final RecordingBackend backend = new RecordingBackend();
  private final AgentCore<String, Integer> core = new AgentCore<>(backend);
  private final Region memory = new Region(0x1000, 256);

  @Test
  void aTransferToAnUnknownPeerIsRefusedWithoutAskingTheBackend() {
    core.register(memory);
    backend.calls.clear();

    assertThatThrownBy(() -> core.post(TransferOp.READ, list(0x1000, 64), "p", list(0, 64), none()))
        .isInstanceOf(TransportException.class)
        .hasMessageContaining("agent d cannot post a READ to p: its metadata was never loaded");
    assertThat(backend.calls).isEmpty();
  }

  @Test
  void aLocalPieceOutsideRegisteredMemoryIsRefusedWithoutAskingTheBackend() {
    core.register(memory);
    core.loadRemoteMetadata(blob("p"));
    backend.calls.clear();

    assertThatThrownBy(
            () -> core.post(TransferOp.READ, list(0x1000 + 200, 64), "p", list(0, 64), none()))
        .isInstanceOf(TransportException.class)
        .hasMessageContaining("local descriptor 0 [0x10c8, +64)");
    assertThat(backend.calls).isEmpty();
  }

  @Test
  void remotePiecesTheBackendSaysArePeersMemoryOnlyArePosted() {
    core.register(memory);
    core.loadRemoteMetadata(blob("p"));
    backend.covers = false;

    assertThatThrownBy(() -> core.post(TransferOp.READ, list(0x1000, 64), "p", list(0, 64), none()))
        .isInstanceOf(TransportException.class)
        .hasMessageContaining("not all inside the memory p registered");
    assertThat(backend.calls).doesNotContain("post");
  }

  @Test
  void reloadingAPeerReleasesItsListsBeforeTheNewBlobReplacesTheOld() {
    core.loadRemoteMetadata(blob("p"));
    core.prepare("p", list(0, 64));
    backend.calls.clear();

    assertThat(core.loadRemoteMetadata(blob("p"))).isEqualTo("p");

    assertThat(backend.calls)
        .containsExactly("peerAgentName", "releasePrepared list1", "loadRemote p replacing");
  }

  @Test
  void deregisteringReleasesTheListsOfThatMemoryFirst() {
    core.register(memory);
    core.prepare(list(0x1000, 64));
    backend.calls.clear();

    core.deregister(memory);

    assertThat(backend.calls).containsExactly("releasePrepared list1", "deregister");
  }

  @Test
  void closingReleasesTransfersThenListsThenMemoryThenTheBackendOnce() {
    core.register(memory);
    core.loadRemoteMetadata(blob("p"));
    core.prepare(list(0x1000, 64));
    core.post(TransferOp.READ, list(0x1000, 64), "p", list(0, 64), none());
    backend.calls.clear();

    core.close();
    core.close();

    assertThat(backend.calls)
        .containsExactly("release 1", "releasePrepared list1", "deregister", "close");
  }

  @Test
  void aCoreHandsItsBackendOverOnlyUnusedAndIsClosedAfterwards() {
    AgentCore<String, Integer> used = new AgentCore<>(new RecordingBackend());
    used.register(memory);

    assertThatThrownBy(used::handOver).isInstanceOf(IllegalStateException.class);
    assertThat(core.handOver()).isSameAs(backend);
    assertThatThrownBy(() -> core.allocate(64))
        .isInstanceOf(TransportException.class)
        .hasMessageContaining("is closed");
    core.close();
    assertThat(backend.calls).doesNotContain("close");
  }

  @Test
  void registrationsFindTheRegionOfTheRightKindAmongRegionsSharingAddresses() {
    Registrations registrations = new Registrations();
    Region host = new Region(0x1000, 256);
    KvMemory device = new Region(0x1000, 256, MemoryKind.VRAM);
    registrations.add(device);
    registrations.add(host);

    assertThat(registrations.holding(new Descriptor(0x1010, 16, 0), MemoryKind.DRAM))
        .isSameAs(host);
    assertThat(registrations.holding(new Descriptor(0x1010, 16, 0), MemoryKind.VRAM))
        .isSameAs(device);
    assertThat(registrations.holding(new Descriptor(0x10f8, 16, 0), MemoryKind.DRAM)).isNull();
  }

  private static DescriptorList list(long address, long length) {
    return new DescriptorList(MemoryKind.DRAM, List.of(new Descriptor(address, length, 0)));
  }

  private static byte[] blob(String agent) {
    return agent.getBytes(StandardCharsets.UTF_8);
  }

  private static Optional<byte[]> none() {
    return Optional.empty();
  }

  private record Region(long address, long sizeBytes, MemoryKind kind) implements KvMemory {
    Region(long address, long sizeBytes) {
      this(address, sizeBytes, MemoryKind.DRAM);
    }

    @Override
    public int deviceId() {
      return 0;
    }

    @Override
    public void write(long offset, ByteBuffer src) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void read(long offset, ByteBuffer dst) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void close() {}
  }

  /** Records each call; a blob is the peer's name; every remote piece is covered unless told. */
  private static final class RecordingBackend implements TransportBackend<String, Integer> {
    final List<String> calls = new ArrayList<>();
    boolean covers = true;
    private int lists;
    private int requests;

    @Override
    public String agentName() {
      return "d";
    }

    @Override
    public MemoryKind memoryKind() {
      return MemoryKind.DRAM;
    }

    @Override
    public KvMemory allocate(long sizeBytes) {
      calls.add("allocate");
      return new Region(0x9000, sizeBytes);
    }

    @Override
    public void register(KvMemory memory) {
      calls.add("register");
    }

    @Override
    public void deregister(KvMemory memory) {
      calls.add("deregister");
    }

    @Override
    public byte[] localMetadata() {
      return blob("d");
    }

    @Override
    public String peerAgentName(byte[] metadata) {
      calls.add("peerAgentName");
      return new String(metadata, StandardCharsets.UTF_8);
    }

    @Override
    public String loadRemote(byte[] metadata, boolean replacing) {
      String name = new String(metadata, StandardCharsets.UTF_8);
      calls.add("loadRemote " + name + (replacing ? " replacing" : ""));
      return name;
    }

    @Override
    public void unloadRemote(String agentName) {
      calls.add("unloadRemote " + agentName);
    }

    @Override
    public boolean covers(String remoteAgent, DescriptorList remote) {
      calls.add("covers");
      return covers;
    }

    @Override
    public String prepare(Optional<String> remoteAgent, DescriptorList pieces) {
      calls.add("prepare");
      return "list" + ++lists;
    }

    @Override
    public void releasePrepared(String list) {
      calls.add("releasePrepared " + list);
    }

    @Override
    public Integer post(
        TransferOp op,
        DescriptorList local,
        String remoteAgent,
        DescriptorList remote,
        Optional<byte[]> notification) {
      calls.add("post");
      return ++requests;
    }

    @Override
    public Integer post(
        TransferOp op,
        String local,
        int[] localIndices,
        String remoteAgent,
        String remote,
        int[] remoteIndices,
        Optional<byte[]> notification) {
      calls.add("post");
      return ++requests;
    }

    @Override
    public TransferStatus status(Integer request) {
      return TransferStatus.DONE;
    }

    @Override
    public void release(Integer request) {
      calls.add("release " + request);
    }

    @Override
    public void notify(String remoteAgent, byte[] message) {
      calls.add("notify");
    }

    @Override
    public List<Notification> takeNotifications() {
      return List.of();
    }

    @Override
    public void close() {
      calls.add("close");
    }
  }
}
