package io.kvbridge.sample;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * The test runs against an all-in-one server (prefill node, decode node, router) on a random port,
 * without the demo and without drops. Every test class so annotated shares one application: its
 * tests must leave the engines serving.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@SpringBootTest(
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
      "kvbridge.sample.prefill.engine-id=api-test-prefill",
      "kvbridge.sample.decode.engine-id=api-test-decode",
      "kvbridge.fake.fabric=api-test",
      "kvbridge.sample.router.drop-after-prefill=0",
      "kvbridge.sample.demo.enabled=false"
    })
public @interface AllInOneServer {}
