package io.kvbridge.nixl.testing;

import io.kvbridge.nixl.capi.NixlLibrary;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Runs a test class only where NIXL loads. Where it does not, the class fails when NIXL is required
 * (system property {@code kvbridge.nixl.required}, true unless the build says otherwise) and is
 * skipped with the reason otherwise, so a missing library never passes silently.
 */
public final class RequiresNixl implements BeforeAllCallback {

  @Override
  public void beforeAll(ExtensionContext context) {
    if (NixlLibrary.probe() instanceof NixlLibrary.Failed failed) {
      String reason = "NIXL cannot be loaded: " + failed.reason();
      if (Boolean.parseBoolean(System.getProperty("kvbridge.nixl.required", "true"))) {
        throw new AssertionError(
            reason + " (kvbridge.nixl.required=true: the NIXL tests must run)",
            failed.cause().orElse(null));
      }
      Assumptions.abort(reason + " (kvbridge.nixl.required=false)");
    }
  }
}
