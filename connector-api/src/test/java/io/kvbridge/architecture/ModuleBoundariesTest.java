package io.kvbridge.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

/** The connector API depends on the JDK alone. */
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
              "org.slf4j..")
          .because(
              "connector-api must stay usable from any engine without Spring, JavaCPP or CUDA");

  @ArchTest
  static final ArchRule apiDoesNotDependOnConnectors =
      noClasses()
          .should()
          .dependOnClassesThat()
          .resideInAnyPackage("io.kvbridge.fake..", "io.kvbridge.nixl..", "io.kvbridge.spring..")
          .because("connectors depend on the API, never the other way round");

  @ArchTest
  static final ArchRule leasesKnowNothingOfTransport =
      noClasses()
          .that()
          .resideInAPackage("io.kvbridge.lease..")
          .should()
          .dependOnClassesThat()
          .resideInAnyPackage(
              "io.kvbridge.transfer..", "io.kvbridge.protocol..", "io.kvbridge.spi..")
          .because("the lease table is a pure data structure over an injected clock");
}
