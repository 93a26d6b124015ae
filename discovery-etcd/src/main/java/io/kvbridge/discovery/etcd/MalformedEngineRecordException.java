package io.kvbridge.discovery.etcd;

/**
 * A value under an engine's key is not an {@link EngineRecord}: the message says which field is
 * missing or malformed. Discovery leaves such an engine out of its view; it is never taken for a
 * live producer, nor for gone.
 */
public class MalformedEngineRecordException extends IllegalArgumentException {

  private static final long serialVersionUID = 1L;

  MalformedEngineRecordException(String problem) {
    super(problem);
  }

  MalformedEngineRecordException(String problem, Throwable cause) {
    super(problem, cause);
  }
}
