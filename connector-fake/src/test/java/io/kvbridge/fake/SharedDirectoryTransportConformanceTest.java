package io.kvbridge.fake;

import io.kvbridge.tck.TransportConformanceTest;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fake transport over a shared directory honours the transport contract too: memory is mapped
 * files, notifications are mailbox files. Each test uses a directory of its own.
 */
class SharedDirectoryTransportConformanceTest extends TransportConformanceTest {

  SharedDirectoryTransportConformanceTest(@TempDir Path directory) {
    super(new FakeConnectorUnderTest(FakeFabric.sharedDirectory(directory)));
  }
}
