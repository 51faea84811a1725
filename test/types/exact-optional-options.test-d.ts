// A type test, checked by vitest's typecheck under the repository's tsconfig, which sets
// exactOptionalPropertyTypes as many applications do: an option read from the environment or a
// config file (string | undefined) must be accepted as it is, without a conditional spread.
import { expect, it } from "vitest";
import { createProvisioningHandler, MemoryUserStore } from "../../src/provisioning/index.ts";
import { createPlatformSimulator, runConformance } from "../../src/testing/index.ts";

const fromEnvironment = (name: string): string | undefined => process.env[name];
const numberFromEnvironment = (name: string): number | undefined =>
  process.env[name] === undefined ? undefined : Number(process.env[name]);

it("takes options that may be undefined under exactOptionalPropertyTypes", () => {
  const handler = createProvisioningHandler({
    store: new MemoryUserStore(),
    basePath: fromEnvironment("PLATFORM_INTEGRATION_TEST_UNSET_BASE_PATH"),
    bodyLimit: numberFromEnvironment("PLATFORM_INTEGRATION_TEST_UNSET_BODY_LIMIT"),
  });
  const simulator = createPlatformSimulator({
    target: handler,
    timeoutMs: numberFromEnvironment("PLATFORM_INTEGRATION_TEST_UNSET_TIMEOUT"),
  });
  const conformance = () =>
    runConformance(handler, {
      timeoutMs: numberFromEnvironment("PLATFORM_INTEGRATION_TEST_UNSET_TIMEOUT"),
    });
  expect(simulator.pending).toBe(0);
  expect(typeof conformance).toBe("function");
});
