package io.kvbridge.nixl.testing;

import io.kvbridge.nixl.capi.NixlLibrary;
import net.jqwik.api.lifecycle.LifecycleContext;
import net.jqwik.api.lifecycle.SkipExecutionHook;

/**
 * {@link RequiresNixl} for jqwik properties, which JUnit Jupiter extensions do not reach: where
 * NIXL does not load, each property is skipped with the reason when NIXL is optional (system
 * property {@code kvbridge.nixl.required=false}); when it is required the property runs and fails
 * on its first agent, with NIXL's own error.
 */
public final class RequiresNixlForProperties implements SkipExecutionHook {

  @Override
  public SkipResult shouldBeSkipped(LifecycleContext context) {
    if (NixlLibrary.probe() instanceof NixlLibrary.Failed failed
        && !Boolean.parseBoolean(System.getProperty("kvbridge.nixl.required", "true"))) {
      return SkipResult.skip(
          "NIXL cannot be loaded: " + failed.reason() + " (kvbridge.nixl.required=false)");
    }
    return SkipResult.doNotSkip();
  }
}
