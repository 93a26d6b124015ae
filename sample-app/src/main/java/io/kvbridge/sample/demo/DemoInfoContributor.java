package io.kvbridge.sample.demo;

import java.util.Map;
import org.springframework.boot.actuate.info.Info;
import org.springframework.boot.actuate.info.InfoContributor;

/** Adds the demo's summary to the {@code info} endpoint under {@code kvbridgeDemo}. */
public final class DemoInfoContributor implements InfoContributor {

  private final DemoReport report;

  /** Reports {@code report}. */
  public DemoInfoContributor(DemoReport report) {
    this.report = report;
  }

  @Override
  public void contribute(Info.Builder builder) {
    builder.withDetail(
        "kvbridgeDemo",
        report
            .latest()
            .<Map<String, Object>>map(DemoSummary::toMap)
            .orElse(Map.of("status", report.summary().isDone() ? "failed" : "running")));
  }
}
