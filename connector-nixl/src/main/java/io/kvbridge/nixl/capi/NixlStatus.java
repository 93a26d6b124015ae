package io.kvbridge.nixl.capi;

/**
 * The status codes of NIXL's C API ({@code nixl_capi_status_t}), as NIXL 1.5.1 returns them.
 *
 * <p>The C API folds many C++ failures into {@link #ERROR_BACKEND}: a transfer not yet posted, a
 * re-post while active, a remote disconnect, a cancelled transfer, and any exception. Only {@link
 * #ERROR_NOT_FOUND} reliably means "that agent or memory is not known".
 */
public final class NixlStatus {

  /** The call succeeded; a transfer is complete. */
  public static final int SUCCESS = 0;

  /** A transfer is still in progress. */
  public static final int IN_PROG = 1;

  /** An argument was null or out of range. */
  public static final int ERROR_INVALID_PARAM = -1;

  /** The backend or NIXL failed; also every failure the C API does not distinguish. */
  public static final int ERROR_BACKEND = -2;

  /** The object is in the wrong state for the call (e.g. a request destroyed before release). */
  public static final int ERROR_INVALID_STATE = -3;

  /** Declared by the C API; NIXL 1.5.1 reports exceptions as {@link #ERROR_BACKEND}. */
  public static final int ERROR_EXCEPTION = -4;

  /** The agent was created without telemetry. */
  public static final int ERROR_NO_TELEMETRY = -5;

  /** The remote agent's metadata is not loaded, or no registered memory covers the request. */
  public static final int ERROR_NOT_FOUND = -6;

  private NixlStatus() {}

  /** The code's name, e.g. {@code ERROR_NOT_FOUND}, or {@code UNKNOWN} for a code NIXL added. */
  public static String name(int code) {
    return switch (code) {
      case SUCCESS -> "SUCCESS";
      case IN_PROG -> "IN_PROG";
      case ERROR_INVALID_PARAM -> "ERROR_INVALID_PARAM";
      case ERROR_BACKEND -> "ERROR_BACKEND";
      case ERROR_INVALID_STATE -> "ERROR_INVALID_STATE";
      case ERROR_EXCEPTION -> "ERROR_EXCEPTION";
      case ERROR_NO_TELEMETRY -> "ERROR_NO_TELEMETRY";
      case ERROR_NOT_FOUND -> "ERROR_NOT_FOUND";
      default -> "UNKNOWN";
    };
  }

  /** The code with its name, e.g. {@code -6 (ERROR_NOT_FOUND)}. */
  public static String describe(int code) {
    return code + " (" + name(code) + ")";
  }
}
