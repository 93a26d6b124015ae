package io.kvbridge.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

/**
 * The connector API depends on the JDK alone, and inside it each package depends only downwards:
 * {@code wire} (the specified bytes) knows nothing of the {@code spi} or the {@code runtime}; the
 * {@code spi} (what engines and connector authors see) knows nothing of the {@code runtime} that
 * implements the protocol, nor of the {@code wire}: both take the network values they share from
 * {@code net}; the lease table knows nothing of any of them.
 */
@AnalyzeClasses(packages = "io.kvbridge", importOptions = ImportOption.DoNotIncludeTests.class)
class ModuleBoundariesTest {

  @ArchTest
  static final ArchRule apiSeesNoFrameworkOrNativeCode =
      noClasses()
          .should()
          .dependOnClassesThat()
          .resideInAnyPackage(
              "org.springframework..",
              "org.bytedeco..",
              "io.micrometer..",
              "jakarta..",
              "org.slf4j..",
              "org.junit..",
              "org.assertj..")
          .because(
              "connector-api must stay usable from any engine without Spring, JavaCPP or CUDA");

  @ArchTest
  static final ArchRule apiDoesNotDependOnConnectorsOrTheKit =
      noClasses()
          .should()
          .dependOnClassesThat()
          .resideInAnyPackage(
              "io.kvbridge.fake..",
              "io.kvbridge.nixl..",
              "io.kvbridge.spring..",
              "io.kvbridge.tck..")
          .because("connectors and the kit depend on the API, never the other way round");

  @ArchTest
  static final ArchRule leasesKnowNothingOfTransport =
      noClasses()
          .that()
          .resideInAPackage("io.kvbridge.lease..")
          .should()
          .dependOnClassesThat()
          .resideInAnyPackage(
              "io.kvbridge.transfer..",
              "io.kvbridge.runtime..",
              "io.kvbridge.wire..",
              "io.kvbridge.spi..")
          .because("the lease table is a pure data structure over an injected clock");

  @ArchTest
  static final ArchRule wireFormatKnowsNothingOfTheRuntimeOrTheSpi =
      noClasses()
          .that()
          .resideInAPackage("io.kvbridge.wire..")
          .should()
          .dependOnClassesThat()
          .resideInAnyPackage("io.kvbridge.runtime..", "io.kvbridge.spi..")
          .because(
              "the wire format is specified byte for byte in docs/protocol.md; it encodes values,"
                  + " it does not decide anything");

  @ArchTest
  static final ArchRule spiKnowsNothingOfTheRuntime =
      noClasses()
          .that()
          .resideInAPackage("io.kvbridge.spi..")
          .should()
          .dependOnClassesThat()
          .resideInAnyPackage("io.kvbridge.runtime..")
          .because(
              "engines and connector authors program against the SPI, never against the runtime"
                  + " behind it");

  @ArchTest
  static final ArchRule spiSpeaksItsOwnVocabulary =
      noClasses()
          .that()
          .resideInAPackage("io.kvbridge.spi..")
          .should()
          .dependOnClassesThat()
          .resideInAnyPackage("io.kvbridge.wire..")
          .because(
              "an engine author reads the SPI alone: the addresses, secret and drop reasons it"
                  + " names live in io.kvbridge.net, which the wire format imports too");

  @ArchTest
  static final ArchRule netValuesDependOnNothingOfKvbridge =
      noClasses()
          .that()
          .resideInAPackage("io.kvbridge.net..")
          .should()
          .dependOnClassesThat()
          .resideInAnyPackage(
              "io.kvbridge.spi..",
              "io.kvbridge.wire..",
              "io.kvbridge.runtime..",
              "io.kvbridge.transfer..",
              "io.kvbridge.lease..")
          .because("the shared network values sit below both the SPI and the wire format");

  @ArchTest
  static final ArchRule producerSideUsesNothingOfTheConsumerSide =
      noClasses()
          .that()
          .resideInAPackage("io.kvbridge.runtime.producer..")
          .should()
          .dependOnClassesThat()
          .resideInAPackage("io.kvbridge.runtime.consumer..")
          .because(
              "P's half of the protocol speaks to D only through the wire format; what both sides"
                  + " share is in io.kvbridge.runtime.engine");

  @ArchTest
  static final ArchRule consumerSideUsesNothingOfTheProducerSide =
      noClasses()
          .that()
          .resideInAPackage("io.kvbridge.runtime.consumer..")
          .should()
          .dependOnClassesThat()
          .resideInAPackage("io.kvbridge.runtime.producer..")
          .because(
              "D's half of the protocol speaks to P only through the wire format; what both sides"
                  + " share is in io.kvbridge.runtime.engine");

  @ArchTest
  static final ArchRule sidesAndWhatTheyShareSitBelowTheConnector =
      noClasses()
          .that()
          .resideInAnyPackage(
              "io.kvbridge.runtime.producer..",
              "io.kvbridge.runtime.consumer..",
              "io.kvbridge.runtime.engine..")
          .should()
          .dependOnClassesThat()
          .resideInAPackage("io.kvbridge.runtime")
          .because("PullConnector composes the two sides; neither side reaches back up to it");

  @ArchTest
  static final ArchRule whatBothSidesShareKnowsNeitherSide =
      noClasses()
          .that()
          .resideInAPackage("io.kvbridge.runtime.engine..")
          .should()
          .dependOnClassesThat()
          .resideInAnyPackage("io.kvbridge.runtime.producer..", "io.kvbridge.runtime.consumer..")
          .because("the engine's ranks, counters and block checksums serve both sides alike");

  @ArchTest
  static final ArchRule packagesFormNoCycles =
      slices().matching("io.kvbridge.(*)..").should().beFreeOfCycles();
}
