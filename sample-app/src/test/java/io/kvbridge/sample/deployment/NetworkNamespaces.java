package io.kvbridge.sample.deployment;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Hosts for a deployment test: each a Linux network namespace with one interface, {@code eth0},
 * joined to a bridge in this namespace by a veth pair, on a /24 of its own; this namespace has the
 * bridge's address {@code .1}, so the test reaches every host. Names carry a random tag, so runs on
 * one machine do not collide. Needs root and {@code ip} (iproute2).
 *
 * <p>Threads: one test thread.
 */
final class NetworkNamespaces implements AutoCloseable {

  private final String tag;
  private final String subnet;
  private final String bridge;
  private final List<String> namespaces = new ArrayList<>();
  private boolean bridgeUp;

  private NetworkNamespaces(String tag, String subnet) {
    this.tag = tag;
    this.subnet = subnet;
    this.bridge = tag + "br";
  }

  /**
   * Why namespaces cannot be made here (not root, no {@code ip}), or empty if they can: tries to
   * make one and removes it.
   */
  static Optional<String> unavailable() {
    String probe = "kvbprobe" + Integer.toHexString(ThreadLocalRandom.current().nextInt(0x10000));
    try {
      run("ip", "netns", "add", probe);
    } catch (IllegalStateException e) {
      return Optional.of("network namespaces cannot be created here: " + e.getMessage());
    }
    run("ip", "netns", "del", probe);
    return Optional.empty();
  }

  /** Creates the bridge, with this namespace's address on it. */
  static NetworkNamespaces create() {
    ThreadLocalRandom random = ThreadLocalRandom.current();
    NetworkNamespaces hosts =
        new NetworkNamespaces(
            "kvf" + Integer.toHexString(0x1000 + random.nextInt(0xf000)),
            "10.213." + random.nextInt(1, 255));
    try {
      run("ip", "link", "add", hosts.bridge, "type", "bridge");
      hosts.bridgeUp = true;
      run("ip", "addr", "add", hosts.subnet + ".1/24", "dev", hosts.bridge);
      run("ip", "link", "set", hosts.bridge, "up");
    } catch (RuntimeException e) {
      hosts.close();
      throw e;
    }
    return hosts;
  }

  /** This namespace's address on the bridge. */
  String gateway() {
    return subnet + ".1";
  }

  /**
   * Adds host {@code name} at address {@code .octet} (2 to 254); returns the namespace's name, for
   * {@link #command}.
   */
  String host(String name, int octet) {
    String namespace = tag + "-" + name;
    String outside = tag + "h" + octet;
    String inside = tag + "p" + octet;
    run("ip", "netns", "add", namespace);
    namespaces.add(namespace);
    run("ip", "link", "add", outside, "type", "veth", "peer", "name", inside);
    run("ip", "link", "set", inside, "netns", namespace);
    run("ip", "link", "set", outside, "master", bridge);
    run("ip", "link", "set", outside, "up");
    run("ip", "-n", namespace, "link", "set", inside, "name", "eth0");
    run("ip", "-n", namespace, "addr", "add", address(octet) + "/24", "dev", "eth0");
    run("ip", "-n", namespace, "link", "set", "eth0", "up");
    run("ip", "-n", namespace, "link", "set", "lo", "up");
    return namespace;
  }

  /** The address of the host at {@code .octet}. */
  String address(int octet) {
    return subnet + "." + octet;
  }

  /** {@code command} run inside {@code namespace}; {@code ip netns exec} execs it, same PID. */
  static List<String> command(String namespace, List<String> command) {
    List<String> inside = new ArrayList<>(List.of("ip", "netns", "exec", namespace));
    inside.addAll(command);
    return inside;
  }

  /** Removes every namespace (their veth pairs go with them) and the bridge; never throws. */
  @Override
  public void close() {
    for (String namespace : namespaces) {
      quietly("ip", "netns", "del", namespace);
    }
    namespaces.clear();
    if (bridgeUp) {
      quietly("ip", "link", "del", bridge);
      bridgeUp = false;
    }
  }

  private static void quietly(String... command) {
    try {
      run(command);
    } catch (RuntimeException e) {
      System.err.println("cleanup: " + e.getMessage());
    }
  }

  private static void run(String... command) {
    String output;
    int status;
    try {
      Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
      output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        throw new IllegalStateException(String.join(" ", command) + " did not finish in 30 s");
      }
      status = process.exitValue();
    } catch (IOException e) {
      throw new IllegalStateException(String.join(" ", command) + ": " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(String.join(" ", command) + " was interrupted", e);
    }
    if (status != 0) {
      throw new IllegalStateException(
          String.join(" ", command) + " exited with " + status + ": " + output);
    }
  }
}
