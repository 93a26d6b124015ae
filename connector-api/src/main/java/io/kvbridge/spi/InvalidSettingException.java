package io.kvbridge.spi;

import java.util.Objects;

/**
 * A setting of a connector holds a value kvbridge cannot run with: one of {@link ConnectorSettings}
 * or a connector-specific property of {@link ConnectorProperties}. The message is the setting's
 * name followed by the {@link #problem()}, which quotes the value and says what is accepted, e.g.
 * {@code lease.duration (0s) must be positive, e.g. 5s or 500ms}.
 *
 * <p>{@link #setting()} is the name as configured under a framework's prefix ({@code
 * lease.duration}, {@code handshake.address}, {@code nixl.memory}), so a framework can report the
 * property under its own name: the starter reports {@code kvbridge.} followed by the setting.
 */
public class InvalidSettingException extends IllegalArgumentException {

  private static final long serialVersionUID = 1L;

  private final String setting;
  private final String problem;

  /**
   * A refusal of {@code setting}.
   *
   * @param setting the setting's name, e.g. {@code lease.duration}
   * @param problem what is wrong, without the name: the value and what is accepted, e.g. {@code
   *     '-1' is not a whole number between 0 and 7}
   */
  public InvalidSettingException(String setting, String problem) {
    this(setting, problem, null);
  }

  /** A refusal of {@code setting}, with the failure that revealed it. */
  public InvalidSettingException(String setting, String problem, Throwable cause) {
    super(Objects.requireNonNull(setting, "setting") + " " + problem, cause);
    this.setting = setting;
    this.problem = problem;
  }

  /** The setting's name, e.g. {@code lease.duration} or {@code nixl.memory}. */
  public String setting() {
    return setting;
  }

  /** The message without the setting's name: the value and what is accepted. */
  public String problem() {
    return problem;
  }
}
