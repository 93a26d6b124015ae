package io.kvbridge.nixl.testing;

import io.kvbridge.nixl.capi.NixlLibrary;
import java.util.Optional;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestInstanceFactoryContext;
import org.junit.jupiter.api.extension.TestInstancePreConstructCallback;

/**
 * Runs a test class only where NIXL loads, so a missing library never passes silently. Where it
 * does not load, the class fails when NIXL is required (system property {@code
 * kvbridge.nixl.required}, true unless the build says otherwise); otherwise each of its tests is
 * skipped with the reason (before the test instance is built, so field initialisers that create
 * agents do not run).
 */
public final class RequiresNixl implements BeforeAllCallback, TestInstancePreConstructCallback {

  @Override
  public void beforeAll(ExtensionContext context) {
    missing()
        .filter(reason -> required())
        .ifPresent(
            reason -> {
              throw new AssertionError(
                  reason + " (kvbridge.nixl.required=true: the NIXL tests must run)",
                  ((NixlLibrary.Failed) NixlLibrary.probe()).cause().orElse(null));
            });
  }

  @Override
  public void preConstructTestInstance(
      TestInstanceFactoryContext factoryContext, ExtensionContext context) {
    missing().ifPresent(reason -> Assumptions.abort(reason + " (kvbridge.nixl.required=false)"));
  }

  private static Optional<String> missing() {
    if (NixlLibrary.probe() instanceof NixlLibrary.Failed failed) {
      return Optional.of("NIXL cannot be loaded: " + failed.reason());
    }
    return Optional.empty();
  }

  private static boolean required() {
    return Boolean.parseBoolean(System.getProperty("kvbridge.nixl.required", "true"));
  }
}
