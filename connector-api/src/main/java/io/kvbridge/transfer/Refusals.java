package io.kvbridge.transfer;

/**
 * The messages an {@link AgentCore} refuses with: one set for every connector, each naming the
 * agent, what was asked, the value at fault and what to do.
 */
final class Refusals {

  private final String agentName;

  Refusals(String agentName) {
    this.agentName = agentName;
  }

  TransportException closed(String action) {
    return new TransportException(
        "agent " + agentName + " is closed and cannot " + action + "; create a new transport");
  }

  TransportException notReceiving() {
    return new TransportException("agent " + agentName + " is closed; it receives nothing");
  }

  TransportException alreadyRegistered(KvMemory memory) {
    return new TransportException(memory + " is already registered with agent " + agentName);
  }

  TransportException notRegistered(KvMemory memory) {
    return new TransportException(memory + " is not registered with agent " + agentName);
  }

  TransportException emptyMetadata() {
    return new TransportException("cannot load an empty metadata blob into agent " + agentName);
  }

  TransportException unknownPeer(String action, String remoteAgent) {
    return new TransportException(
        "agent "
            + agentName
            + " cannot "
            + action
            + " "
            + remoteAgent
            + ": its metadata was never loaded or was invalidated; load it with"
            + " loadRemoteMetadata");
  }

  TransportException unknownTransfer(String action, TransferHandle handle) {
    return new TransportException(
        "agent "
            + agentName
            + " cannot "
            + action
            + " transfer "
            + handle.id()
            + ": it was never posted here, was already released, or the agent closed");
  }

  /** What a transfer is, for messages about it. */
  String transfer(TransferOp op, String remoteAgent) {
    return op + " from agent " + agentName + " to " + remoteAgent;
  }

  TransportException unpaired(TransferOp op, String remoteAgent, IllegalArgumentException e) {
    return new TransportException(
        "cannot post " + transfer(op, remoteAgent) + ": " + e.getMessage(), e);
  }

  /** A post whose local piece {@code i} lies outside registered memory. */
  TransportException postOutsideLocal(
      TransferOp op, String remoteAgent, DescriptorList local, int i) {
    return new TransportException(
        "cannot post "
            + transfer(op, remoteAgent)
            + ": local descriptor "
            + outsideLocal(local, i));
  }

  /** A post whose remote pieces lie outside the peer's registered memory. */
  TransportException postOutsideRemote(TransferOp op, String remoteAgent, DescriptorList remote) {
    return new TransportException(
        "cannot post " + transfer(op, remoteAgent) + ": " + outsideRemote(remoteAgent, remote));
  }

  /** A local list whose piece {@code i} lies outside registered memory. */
  TransportException prepareOutsideLocal(DescriptorList local, int i) {
    return new TransportException(
        "agent "
            + agentName
            + " cannot prepare a list of its memory: descriptor "
            + outsideLocal(local, i));
  }

  /** A remote list whose pieces lie outside the peer's registered memory. */
  TransportException prepareOutsideRemote(String remoteAgent, DescriptorList remote) {
    return new TransportException(
        "agent "
            + agentName
            + " cannot prepare a list of the memory of "
            + remoteAgent
            + ": "
            + outsideRemote(remoteAgent, remote));
  }

  private String outsideLocal(DescriptorList local, int i) {
    Descriptor d = local.descriptors().get(i);
    return i
        + " [0x"
        + Long.toHexString(d.address())
        + ", +"
        + d.length()
        + ") on "
        + local.kind()
        + " device "
        + d.deviceId()
        + " lies outside the memory registered with agent "
        + agentName
        + "; register the memory first";
  }

  private static String outsideRemote(String remoteAgent, DescriptorList remote) {
    return "the "
        + remote.descriptors().size()
        + " remote "
        + remote.kind()
        + " descriptors are not all inside the memory "
        + remoteAgent
        + " registered (as its loaded metadata says); reload its metadata if it registered more"
        + " since";
  }
}
