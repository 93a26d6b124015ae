package io.kvbridge.discovery.etcd;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

/** Discovery on etcd depends on the connector API and the etcd client, nothing else of kvbridge. */
@AnalyzeClasses(
    packages = "io.kvbridge.discovery.etcd",
    importOptions = ImportOption.DoNotIncludeTests.class)
class ModuleBoundariesTest {

  @ArchTest
  static final ArchRule discoverySeesNoFramework =
      noClasses()
          .should()
          .dependOnClassesThat()
          .resideInAnyPackage("org.springframework..", "io.micrometer..", "jakarta..")
          .because("engines embed discovery without Spring; the starter wires it for Spring");

  @ArchTest
  static final ArchRule discoveryKnowsNoConnectorNorTheStarter =
      noClasses()
          .should()
          .dependOnClassesThat()
          .resideInAnyPackage(
              "io.kvbridge.fake..",
              "io.kvbridge.nixl..",
              "io.kvbridge.spring..",
              "io.kvbridge.tck..")
          .because("discovery works for every connector type, through the connector API");
}
