package io.kvbridge.sample.router;

/**
 * Whether the router sends requests to a node, and why.
 *
 * @param up whether the node is chosen for requests
 * @param why what the router last learned: not probed yet, its health answer, or the failed call
 */
public record NodeHealth(boolean up, String why) {

  /** A node not probed yet: chosen until a probe or a call says otherwise. */
  public static NodeHealth unprobed() {
    return new NodeHealth(true, "not probed yet");
  }

  /** A node whose health answered UP. */
  public static NodeHealth probedUp() {
    return new NodeHealth(true, "health UP");
  }

  /** A node skipped until a probe finds it UP again. */
  public static NodeHealth down(String why) {
    return new NodeHealth(false, why);
  }
}
