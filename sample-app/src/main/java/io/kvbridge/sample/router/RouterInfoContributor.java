package io.kvbridge.sample.router;

import org.springframework.boot.actuate.info.Info;
import org.springframework.boot.actuate.info.InfoContributor;

/**
 * Adds the router's {@link RouterStats} to the {@code info} endpoint under {@code kvbridgeRouter}:
 * its counts, and each node's health (and why), calls in flight, served, failed and cancelled.
 */
public final class RouterInfoContributor implements InfoContributor {

  private final PdRouter router;

  /** Reports {@code router}. */
  public RouterInfoContributor(PdRouter router) {
    this.router = router;
  }

  @Override
  public void contribute(Info.Builder builder) {
    builder.withDetail("kvbridgeRouter", router.stats());
  }
}
