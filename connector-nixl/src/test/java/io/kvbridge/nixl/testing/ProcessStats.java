package io.kvbridge.nixl.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Linux process figures the leak tests compare before and after a loop. */
public final class ProcessStats {

  private ProcessStats() {}

  /** Resident set size in KiB, from {@code /proc/self/status}. */
  public static long rssKib() {
    return statusField("VmRSS:");
  }

  /** Number of threads of this process, Java and native. */
  public static long threads() {
    return statusField("Threads:");
  }

  private static long statusField(String name) {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
        if (line.startsWith(name)) {
          return Long.parseLong(line.substring(name.length()).trim().split("\\s+")[0]);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    throw new IllegalStateException("/proc/self/status has no " + name);
  }
}
