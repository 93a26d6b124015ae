package io.kvbridge.sample.demo;

import io.kvbridge.sample.SampleProperties;
import io.kvbridge.sample.node.Node;
import io.kvbridge.sample.node.NodeKind;
import io.kvbridge.sample.router.PdRouter;
import io.kvbridge.spring.KvBridgeProperties;
import java.net.URI;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.web.client.RestClient;

/**
 * Starts the demo on its own thread once the application is ready (the server answers), prints its
 * summary, records it in the {@link DemoReport}, and, with {@code
 * kvbridge.sample.demo.exit-after=true}, stops the application: exit code 0 if every check passed,
 * 1 otherwise. Runs only when the prefill node, the decode node and the router all run in this JVM.
 */
public final class DemoRunner implements ApplicationListener<ApplicationReadyEvent> {

  private static final Logger LOG = LoggerFactory.getLogger(DemoRunner.class);

  /** How long the demo waits for the router's pools to hold nodes. */
  private static final Duration NODES_PATIENCE = Duration.ofSeconds(30);

  private final SampleProperties properties;
  private final KvBridgeProperties kvbridge;
  private final ObjectProvider<Node> nodes;
  private final ObjectProvider<PdRouter> router;
  private final RestClient.Builder clients;
  private final DemoReport report;

  /** A runner that finds the nodes among the application's beans. */
  public DemoRunner(
      SampleProperties properties,
      KvBridgeProperties kvbridge,
      ObjectProvider<Node> nodes,
      ObjectProvider<PdRouter> router,
      RestClient.Builder clients,
      DemoReport report) {
    this.properties = properties;
    this.kvbridge = kvbridge;
    this.nodes = nodes;
    this.router = router;
    this.clients = clients;
    this.report = report;
  }

  @Override
  public void onApplicationEvent(ApplicationReadyEvent event) {
    Map<NodeKind, Node> byKind = new EnumMap<>(NodeKind.class);
    nodes.forEach(node -> byKind.put(node.kind(), node));
    Node p = byKind.get(NodeKind.PREFILL);
    Node d = byKind.get(NodeKind.DECODE);
    PdRouter r = router.getIfAvailable();
    if (p == null || d == null || r == null) {
      LOG.info(
          "demo skipped: it needs the prefill node, the decode node and the router in this JVM;"
              + " set kvbridge.sample.demo.enabled=false to silence this");
      report.fail(new IllegalStateException("the demo needs all three nodes in this JVM"));
      return;
    }
    String port = event.getApplicationContext().getEnvironment().getProperty("local.server.port");
    Supplier<URI> routerBase = () -> URI.create("http://127.0.0.1:" + port);
    DemoWorkload workload =
        new DemoWorkload(
            properties.demo(),
            clients.clone().build(),
            routerBase,
            p.engine(),
            d.engine(),
            kvbridge.lease().duration(),
            kvbridge.lease().sweepInterval(),
            properties.engine().prefillCost());
    Thread thread =
        new Thread(
            () -> {
              int exitCode;
              double routerShare = r.faults().share();
              r.faults().arm(properties.demo().dropAfterPrefill());
              try {
                awaitNodes(r);
                DemoSummary summary = workload.run();
                LOG.info("demo finished{}{}", System.lineSeparator(), summary.format());
                report.complete(summary);
                exitCode = summary.passed() ? 0 : 1;
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                report.fail(e);
                return;
              } catch (RuntimeException e) {
                LOG.error("demo could not run", e);
                report.fail(e);
                exitCode = 1;
              } finally {
                r.faults().arm(routerShare);
              }
              if (properties.demo().exitAfter()) {
                int code = exitCode;
                System.exit(SpringApplication.exit(event.getApplicationContext(), () -> code));
              }
              LOG.info(
                  "serving on http://127.0.0.1:{}: POST /v1/completions; actuator at"
                      + " /actuator/kvbridge, /actuator/health, /actuator/metrics",
                  port);
            },
            "kvbridge-demo");
    thread.setDaemon(true);
    thread.start();
  }

  /**
   * Waits, at most {@link #NODES_PATIENCE}, until the router has a prefill and a decode node (with
   * pools from etcd, the nodes of this server join them only once they registered their URLs) and
   * follows what the decode nodes' caches hold.
   */
  private static void awaitNodes(PdRouter router) throws InterruptedException {
    long deadline = System.nanoTime() + NODES_PATIENCE.toNanos();
    if (!router.hasNodes()) {
      LOG.info("demo waits for the router's pools to hold a prefill and a decode node");
    }
    while (!router.hasNodes() && System.nanoTime() < deadline) {
      Thread.sleep(100);
    }
    // The turns after the first are sent where their start is cached once the router knows it.
    if (!router.followsEveryDecodeNode()) {
      LOG.info("demo waits for the router to follow every decode node's KV events");
    }
    while (!router.followsEveryDecodeNode() && System.nanoTime() < deadline) {
      Thread.sleep(100);
    }
  }
}
