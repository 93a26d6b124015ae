package io.kvbridge.tck.faults;

import io.kvbridge.transfer.DescriptorList;
import io.kvbridge.transfer.TransferOp;
import io.kvbridge.transfer.TransportBackend;
import java.util.Optional;
import java.util.Set;

/** A transfer as it was asked for, to post now or once it is unstalled. */
sealed interface Posting<L, R> {
  TransferOp op();

  String remoteAgent();

  Optional<byte[]> notification();

  R postTo(TransportBackend<L, R> backend);

  boolean listsLive(Set<L> live);

  record Described<L, R>(
      TransferOp op,
      DescriptorList local,
      String remoteAgent,
      DescriptorList remote,
      Optional<byte[]> notification)
      implements Posting<L, R> {

    @Override
    public R postTo(TransportBackend<L, R> backend) {
      return backend.post(op, local, remoteAgent, remote, notification);
    }

    @Override
    public boolean listsLive(Set<L> live) {
      return true;
    }
  }

  record Indexed<L, R>(
      TransferOp op,
      L local,
      int[] localIndices,
      String remoteAgent,
      L remote,
      int[] remoteIndices,
      Optional<byte[]> notification)
      implements Posting<L, R> {

    @Override
    public R postTo(TransportBackend<L, R> backend) {
      return backend.post(
          op, local, localIndices, remoteAgent, remote, remoteIndices, notification);
    }

    @Override
    public boolean listsLive(Set<L> live) {
      return live.contains(local) && live.contains(remote);
    }
  }
}
