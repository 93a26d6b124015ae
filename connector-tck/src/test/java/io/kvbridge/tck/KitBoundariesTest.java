package io.kvbridge.tck;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

/**
 * The kit tests connectors from the outside: through the SPI, the transport contract and the
 * specified wire format, as a third party's connector would be tested.
 */
@AnalyzeClasses(packages = "io.kvbridge.tck", importOptions = ImportOption.DoNotIncludeTests.class)
class KitBoundariesTest {

  @ArchTest
  static final ArchRule kitKnowsNoConnector =
      noClasses()
          .should()
          .dependOnClassesThat()
          .resideInAnyPackage(
              "io.kvbridge.fake..",
              "io.kvbridge.nixl..",
              "io.kvbridge.spring..",
              "org.springframework..")
          .because("a connector must be testable with the kit without any other connector present");
}
