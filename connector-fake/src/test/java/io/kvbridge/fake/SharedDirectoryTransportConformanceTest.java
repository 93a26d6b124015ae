package io.kvbridge.fake;

import io.kvbridge.tck.TransportConformanceTest;
import io.kvbridge.transfer.Transport;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fake transport over a shared directory honours the transport contract too: memory is mapped
 * files, notifications are mailbox files. Each test uses a directory of its own.
 */
class SharedDirectoryTransportConformanceTest extends TransportConformanceTest {

  @TempDir Path directory;

  @Override
  protected Transport newTransport(String agentName) {
    return FakeFabric.sharedDirectory(directory).join(agentName);
  }
}
