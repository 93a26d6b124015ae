package io.kvbridge.tck.protocol;

import io.kvbridge.transfer.DescriptorList;
import io.kvbridge.transfer.ForwardingTransport;
import io.kvbridge.transfer.Notification;
import io.kvbridge.transfer.PreparedList;
import io.kvbridge.transfer.TransferHandle;
import io.kvbridge.transfer.TransferOp;
import io.kvbridge.transfer.Transport;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Passes every call to the transport it wraps, prepared lists included, and counts how a connector
 * moves its bytes: posts described piece by piece, posts by index from prepared lists, lists
 * prepared and released, notifications received.
 *
 * <p>Threads: as safe as the wrapped transport; the counts are atomic.
 */
final class RecordingTransport extends ForwardingTransport {

  final AtomicInteger describedPosts = new AtomicInteger();
  final AtomicInteger preparedPosts = new AtomicInteger();
  final AtomicInteger localListsPrepared = new AtomicInteger();
  final AtomicInteger remoteListsPrepared = new AtomicInteger();
  final AtomicInteger listsReleased = new AtomicInteger();
  final AtomicInteger notificationsReceived = new AtomicInteger();

  RecordingTransport(Transport delegate) {
    super(delegate);
  }

  @Override
  public TransferHandle post(
      TransferOp op,
      DescriptorList local,
      String remoteAgent,
      DescriptorList remote,
      Optional<byte[]> notification) {
    describedPosts.incrementAndGet();
    return super.post(op, local, remoteAgent, remote, notification);
  }

  @Override
  public PreparedList prepare(DescriptorList local) {
    localListsPrepared.incrementAndGet();
    return super.prepare(local);
  }

  @Override
  public PreparedList prepare(String remoteAgent, DescriptorList remote) {
    remoteListsPrepared.incrementAndGet();
    return super.prepare(remoteAgent, remote);
  }

  @Override
  public TransferHandle post(
      TransferOp op,
      PreparedList local,
      int[] localIndices,
      PreparedList remote,
      int[] remoteIndices,
      Optional<byte[]> notification) {
    preparedPosts.incrementAndGet();
    return super.post(op, local, localIndices, remote, remoteIndices, notification);
  }

  @Override
  public void release(PreparedList list) {
    listsReleased.incrementAndGet();
    super.release(list);
  }

  @Override
  public List<Notification> drainNotifications() {
    List<Notification> drained = super.drainNotifications();
    notificationsReceived.addAndGet(drained.size());
    return drained;
  }
}
