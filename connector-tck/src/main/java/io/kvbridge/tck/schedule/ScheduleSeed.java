package io.kvbridge.tck.schedule;

import java.security.SecureRandom;
import net.jqwik.api.lifecycle.AroundPropertyHook;
import net.jqwik.api.lifecycle.PropertyExecutionResult;
import net.jqwik.api.lifecycle.PropertyExecutor;
import net.jqwik.api.lifecycle.PropertyLifecycleContext;

/**
 * Lets whoever runs the schedules choose their seed at run time, through the system property
 * {@value #PROPERTY}: unset, the seed in the property's {@code @Property} annotation applies (the
 * fixed seed the build runs with); {@code random} draws a fresh seed; an integer reruns that seed.
 * The seed jqwik used is printed after the property ran and named in its failure, so any run can be
 * repeated.
 *
 * <p>Added to a schedule property with {@code @AddLifecycleHook(ScheduleSeed.class)}. jqwik reads
 * the seed from the property's attributes after this hook set it, before it generates anything.
 */
public final class ScheduleSeed implements AroundPropertyHook {

  /** The system property that chooses the seed. */
  public static final String PROPERTY = "kvbridge.schedules.seed";

  private static final SecureRandom RANDOM = new SecureRandom();

  @Override
  public PropertyExecutionResult aroundProperty(
      PropertyLifecycleContext context, PropertyExecutor property) {
    String chosen = System.getProperty(PROPERTY, "").strip();
    if (chosen.equals("random")) {
      context.attributes().setSeed(Long.toString(RANDOM.nextLong()));
    } else if (!chosen.isEmpty()) {
      context.attributes().setSeed(checked(chosen));
    }
    PropertyExecutionResult result = property.execute();
    String used = result.seed().orElse("?");
    String rerun = "-D" + PROPERTY + "=" + used;
    System.out.println(
        context.label() + ": schedules seed " + used + " (rerun with " + rerun + ")");
    if (result.status() != PropertyExecutionResult.Status.FAILED) {
      return result;
    }
    String message = "schedules failed with seed " + used + "; rerun with " + rerun;
    return result.mapToFailed(
        result
            .throwable()
            .<Throwable>map(t -> new AssertionError(message + ": " + t.getMessage(), t))
            .orElseGet(() -> new AssertionError(message)));
  }

  /** Runs outside every other hook, so the seed is set before anything reads it. */
  @Override
  public int aroundPropertyProximity() {
    return -100;
  }

  private static String checked(String seed) {
    try {
      Long.parseLong(seed);
      return seed;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "system property "
              + PROPERTY
              + " must be 'random' or an integer seed such as 20261130, got '"
              + seed
              + "'",
          e);
    }
  }
}
