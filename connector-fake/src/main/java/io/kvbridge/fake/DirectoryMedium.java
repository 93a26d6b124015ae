package io.kvbridge.fake;

import io.kvbridge.transfer.Descriptor;
import io.kvbridge.transfer.DescriptorList;
import io.kvbridge.transfer.Notification;
import io.kvbridge.transfer.TransportException;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.System.Logger.Level;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * Agents of several processes on one machine, meeting in a shared directory:
 *
 * <pre>
 * &lt;dir&gt;/regions/&lt;agent&gt;-&lt;instance&gt;-&lt;address&gt;.kv   one memory-mapped file per allocated region
 * &lt;dir&gt;/agents/&lt;agent&gt;/lock        held (FileLock) while the agent lives
 * &lt;dir&gt;/agents/&lt;agent&gt;/instance    the live incarnation's id
 * &lt;dir&gt;/agents/&lt;agent&gt;/mailbox/    notifications, one file each
 * </pre>
 *
 * <p>A transfer maps the peer's region file read/write and copies through the mapping, so the bytes
 * are in the peer's memory when the copy returns. A notification is written to a temporary name in
 * the receiver's mailbox and renamed atomically, so a receiver sees whole files only; file names
 * order each sender's notifications. An agent is reachable while its process holds its lock file
 * and its instance file names the incarnation a peer loaded, so a crashed process's agent becomes
 * unreachable without cleanup.
 *
 * <p>Everything in the directory is as trusted as the processes that share it: mailbox files are
 * parsed defensively and malformed ones discarded, but a process that can write the directory can
 * forge a sender's name.
 */
final class DirectoryMedium implements Medium {

  private static final System.Logger LOG = System.getLogger(DirectoryMedium.class.getName());
  private static final Pattern FILE_SAFE = Pattern.compile("[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}");
  private static final byte[] MAGIC = {'K', 'V', 'B', 'N'};
  private static final int VERSION = 2;
  private static final String MESSAGE = ".msg";
  private static final int MAX_MESSAGE_FILE = FakeFabric.MAX_NOTIFICATION_BYTES + 1024;

  private final FakeFabric fabric;
  private final Path root;
  private final Path agentsDir;
  private final Path regionsDir;
  private final String senderTag =
      String.format("%016x", UUID.randomUUID().getLeastSignificantBits());
  private final Map<String, Claim> claims = new ConcurrentHashMap<>();
  private final Map<String, MappedRegion> mappings = new ConcurrentHashMap<>();
  private final Object sendLock = new Object();
  private long sequence;

  DirectoryMedium(FakeFabric fabric, Path root) {
    this.fabric = fabric;
    this.root = root;
    this.agentsDir = root.resolve("agents");
    this.regionsDir = root.resolve("regions");
  }

  /** Creates the directory layout under {@code directory}; returns its canonical path. */
  static Path prepare(Path directory) {
    try {
      Files.createDirectories(directory.resolve("agents"));
      Files.createDirectories(directory.resolve("regions"));
      return directory.toRealPath();
    } catch (IOException e) {
      throw new UncheckedIOException(
          "cannot use " + directory + " as the fake fabric's shared directory: " + e, e);
    }
  }

  @Override
  public String identity() {
    return "dir:" + root;
  }

  @Override
  public long newInstanceId() {
    return UUID.randomUUID().getLeastSignificantBits();
  }

  @Override
  public void checkAgentName(String agentName) {
    if (!FILE_SAFE.matcher(agentName).matches()) {
      throw new IllegalArgumentException(
          "agent name '"
              + agentName
              + "' cannot name a file: on a shared-directory fabric use 1 to 128 letters, digits,"
              + " '.', '_' or '-', not starting with '.'");
    }
  }

  @Override
  public FakeMemory allocate(FakeBackend agent, long sizeBytes) {
    long address = fabric.reserveAddresses(sizeBytes);
    String fileName =
        agent.agentName()
            + "-"
            + Long.toHexString(agent.instanceId())
            + "-"
            + Long.toHexString(address)
            + ".kv";
    Path file = regionsDir.resolve(fileName);
    MappedByteBuffer buffer;
    try (FileChannel channel =
        FileChannel.open(
            file,
            StandardOpenOption.CREATE_NEW,
            StandardOpenOption.READ,
            StandardOpenOption.WRITE)) {
      buffer = channel.map(FileChannel.MapMode.READ_WRITE, 0, sizeBytes);
    } catch (IOException e) {
      throw new TransportException(
          "cannot create the memory file " + file + " of " + sizeBytes + " bytes: " + e, e);
    }
    return new FakeMemory(
        fabric,
        address,
        buffer,
        fileName,
        () -> {
          mappings.remove(fileName);
          deleteQuietly(file);
        });
  }

  @Override
  public boolean claim(FakeBackend agent) {
    Path dir = agentsDir.resolve(agent.agentName());
    FileChannel channel = null;
    try {
      Files.createDirectories(dir.resolve("mailbox"));
      channel =
          FileChannel.open(
              dir.resolve("lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
      FileLock lock = tryLock(channel);
      if (lock == null) {
        channel.close();
        return false; // held by a live process
      }
      // A previous holder of the name is dead: what it left in the mailbox is not for us.
      clearMailbox(dir.resolve("mailbox"));
      writeAtomically(
          dir.resolve("instance"),
          Long.toString(agent.instanceId()).getBytes(StandardCharsets.US_ASCII));
      claims.put(agent.agentName(), new Claim(agent, channel, lock));
      return true;
    } catch (IOException e) {
      closeQuietly(channel);
      throw new TransportException(
          "cannot create agent '" + agent.agentName() + "' in " + root + ": " + e, e);
    }
  }

  @Override
  public void release(FakeBackend agent) {
    Claim claim = claims.get(agent.agentName());
    if (claim == null || claim.agent != agent) {
      return;
    }
    synchronized (claim) {
      claims.remove(agent.agentName(), claim);
      Path dir = agentsDir.resolve(agent.agentName());
      deleteQuietly(dir.resolve("instance"));
      try {
        clearMailbox(dir.resolve("mailbox"));
      } catch (IOException e) {
        LOG.log(Level.DEBUG, "clearing the mailbox of " + agent.agentName() + ": " + e);
      }
      closeQuietly(claim.channel);
    }
  }

  @Override
  public boolean reachable(String agentName, long instanceId) {
    Claim local = claims.get(agentName);
    if (local != null) {
      return local.agent.instanceId() == instanceId;
    }
    Path dir = agentsDir.resolve(agentName);
    try {
      String live = Files.readString(dir.resolve("instance"), StandardCharsets.US_ASCII).trim();
      if (!live.equals(Long.toString(instanceId))) {
        return false;
      }
      try (FileChannel channel = FileChannel.open(dir.resolve("lock"), StandardOpenOption.WRITE)) {
        FileLock probe = tryLock(channel);
        if (probe == null) {
          return true; // another process holds it: the agent lives
        }
        probe.release();
        return false; // nobody held it: its process died
      }
    } catch (IOException e) {
      return false;
    }
  }

  @Override
  public boolean locate(
      AgentMetadata peer, DescriptorList remote, Bytes[] memories, long[] offsets) {
    List<Descriptor> pieces = remote.descriptors();
    for (int i = 0; i < pieces.size(); i++) {
      Descriptor d = pieces.get(i);
      Optional<AgentMetadata.Region> region = peer.regionHolding(d, remote.kind());
      if (region.isEmpty() || region.get().file().isEmpty()) {
        return false;
      }
      Optional<MappedRegion> mapping = map(region.get());
      if (mapping.isEmpty()) {
        return false;
      }
      memories[i] = mapping.get();
      offsets[i] = d.address() - region.get().address();
    }
    return true;
  }

  @Override
  public void deliver(String toAgent, long toInstance, Notification notification) {
    if (!reachable(toAgent, toInstance)) {
      return; // like a datagram to a dead host
    }
    byte[] file = encode(notification, toInstance);
    Path mailbox = agentsDir.resolve(toAgent).resolve("mailbox");
    synchronized (sendLock) {
      // One sequence per process, taken and published under one lock: each sender's files sort in
      // the order it sent them.
      String name = senderTag + "-" + String.format("%016x", sequence++) + MESSAGE;
      try {
        writeAtomically(mailbox.resolve(name), file);
      } catch (IOException e) {
        LOG.log(Level.DEBUG, "notification to " + toAgent + " lost: " + e);
      }
    }
  }

  @Override
  public void collect(FakeBackend agent) {
    Claim claim = claims.get(agent.agentName());
    if (claim == null || claim.agent != agent) {
      return;
    }
    synchronized (claim) {
      Path mailbox = agentsDir.resolve(agent.agentName()).resolve("mailbox");
      List<Path> arrived = new ArrayList<>();
      try (DirectoryStream<Path> files = Files.newDirectoryStream(mailbox, "*" + MESSAGE)) {
        files.forEach(arrived::add);
      } catch (IOException e) {
        LOG.log(Level.WARNING, "cannot read the mailbox of " + agent.agentName() + ": " + e);
        return;
      }
      arrived.sort(null);
      for (Path file : arrived) {
        readAndDelete(file).ifPresent(bytes -> decode(bytes, file, agent));
      }
    }
  }

  // ---- internals -----------------------------------------------------------------------------

  private Optional<MappedRegion> map(AgentMetadata.Region region) {
    MappedRegion known = mappings.get(region.file());
    if (known != null && known.size() >= region.length()) {
      return Optional.of(known);
    }
    Path file = regionsDir.resolve(region.file());
    try (FileChannel channel =
        FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      if (channel.size() < region.length()) {
        return Optional.empty();
      }
      MappedRegion mapped =
          new MappedRegion(channel.map(FileChannel.MapMode.READ_WRITE, 0, region.length()));
      mappings.put(region.file(), mapped);
      return Optional.of(mapped);
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  private static byte[] encode(Notification n, long toInstance) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(64 + n.payload().length);
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.write(MAGIC);
      out.writeByte(VERSION);
      out.writeLong(toInstance);
      byte[] from = n.fromAgent().getBytes(StandardCharsets.UTF_8);
      out.writeShort(from.length);
      out.write(from);
      byte[] payload = n.payload();
      out.writeInt(payload.length);
      out.write(payload);
    } catch (IOException e) {
      throw new UncheckedIOException("writing to memory cannot fail", e);
    }
    return bytes.toByteArray();
  }

  private static void decode(byte[] bytes, Path file, FakeBackend agent) {
    ByteBuffer in = ByteBuffer.wrap(bytes);
    try {
      byte[] magic = new byte[MAGIC.length];
      in.get(magic);
      int version = Byte.toUnsignedInt(in.get());
      long toInstance = in.getLong();
      byte[] from = new byte[Short.toUnsignedInt(in.getShort())];
      in.get(from);
      int length = in.getInt();
      if (!Arrays.equals(magic, MAGIC)
          || version != VERSION
          || from.length == 0
          || length < 0
          || length != in.remaining()) {
        LOG.log(Level.WARNING, "discarding malformed notification file " + file);
        return;
      }
      byte[] payload = new byte[length];
      in.get(payload);
      if (toInstance != agent.instanceId()) {
        return; // for an earlier incarnation of this name
      }
      agent.receive(new Notification(new String(from, StandardCharsets.UTF_8), payload));
    } catch (BufferUnderflowException e) {
      LOG.log(Level.WARNING, "discarding truncated notification file " + file);
    }
  }

  private static Optional<byte[]> readAndDelete(Path file) {
    try {
      if (Files.size(file) > MAX_MESSAGE_FILE) {
        LOG.log(Level.WARNING, "discarding oversized notification file " + file);
        Files.deleteIfExists(file);
        return Optional.empty();
      }
      byte[] bytes = Files.readAllBytes(file);
      Files.deleteIfExists(file);
      return Optional.of(bytes);
    } catch (NoSuchFileException gone) {
      return Optional.empty();
    } catch (IOException e) {
      LOG.log(Level.WARNING, "cannot read notification file " + file + ": " + e);
      return Optional.empty();
    }
  }

  private static void clearMailbox(Path mailbox) throws IOException {
    try (DirectoryStream<Path> files = Files.newDirectoryStream(mailbox)) {
      for (Path f : files) {
        deleteQuietly(f);
      }
    }
  }

  private static void writeAtomically(Path target, byte[] bytes) throws IOException {
    Path tmp = target.resolveSibling("." + UUID.randomUUID() + ".tmp");
    try {
      Files.write(tmp, bytes);
      Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } finally {
      Files.deleteIfExists(tmp);
    }
  }

  private static FileLock tryLock(FileChannel channel) throws IOException {
    try {
      return channel.tryLock();
    } catch (OverlappingFileLockException heldInThisJvm) {
      return null;
    }
  }

  private static void deleteQuietly(Path file) {
    try {
      Files.deleteIfExists(file);
    } catch (IOException e) {
      LOG.log(Level.DEBUG, "cannot delete " + file + ": " + e);
    }
  }

  private static void closeQuietly(FileChannel channel) {
    if (channel != null) {
      try {
        channel.close(); // releases the lock
      } catch (IOException e) {
        LOG.log(Level.DEBUG, "closing a lock file: " + e);
      }
    }
  }

  /** This JVM's hold on an agent name. */
  private record Claim(FakeBackend agent, FileChannel channel, FileLock lock) {}

  /** A peer's region, mapped into this process. */
  private record MappedRegion(ByteBuffer buffer) implements Bytes {
    long size() {
      return buffer.capacity();
    }

    @Override
    public ByteBuffer view(long offset, long length) {
      if (offset < 0 || length < 0 || offset > buffer.capacity() - length) {
        throw new IndexOutOfBoundsException(
            "[" + offset + ", +" + length + ") outside a mapping of " + buffer.capacity());
      }
      return buffer.duplicate().limit((int) (offset + length)).position((int) offset);
    }
  }
}
