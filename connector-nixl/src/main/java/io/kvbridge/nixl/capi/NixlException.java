package io.kvbridge.nixl.capi;

/**
 * A NIXL C API call returned a failure status. The message names the call, the status code and what
 * was being done.
 */
public class NixlException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  private final String call;
  private final int status;

  /**
   * Creates an exception for {@code call} returning {@code status}.
   *
   * @param call the C function, e.g. {@code nixl_capi_create_backend}
   * @param status the returned {@link NixlStatus} code
   * @param what what the call was doing, e.g. {@code creating backend UCX}; may be empty
   */
  public NixlException(String call, int status, String what) {
    super(
        call
            + " failed with status "
            + NixlStatus.describe(status)
            + (what.isBlank() ? "" : " while " + what));
    this.call = call;
    this.status = status;
  }

  /** The C function that failed. */
  public String call() {
    return call;
  }

  /** The status code it returned. */
  public int status() {
    return status;
  }
}
