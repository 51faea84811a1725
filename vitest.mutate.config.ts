// The vitest configuration `npm run mutate` runs under: the project's, with only the tests of the
// folder under mutation (MUTATE_FOLDER, set by scripts/mutate.mjs; see stryker.config.mjs).
import { configDefaults, defineConfig } from "vitest/config";
import base from "./vitest.config.ts";

/** The tests each folder's mutants run against. */
const tests: Record<string, string[]> = {
  // The provisioning core, and the Node, Fastify and Koa adapters that serve it.
  provisioning: ["test/provisioning/**/*.test.ts", "test/adapters/**/*.test.ts"],
  // The users room: its own tests (the store contract on MemoryUserStore among them), and the
  // handler's, which drive the quarantine, the keyed lock and the held-over records.
  users: ["test/users/**/*.test.ts", "test/provisioning/**/*.test.ts"],
  // The audit client, its delivery and its spool; and its stats, default logging and metrics
  // (telemetry.ts), which the clients' observability tests pin.
  audit: [
    "test/clients/audit/**/*.test.ts",
    "test/clients/observability/clients-observability.test.ts",
  ],
  // The shared client layer: HTTP, errors, options, retry policy, base URL, TLS.
  "integration-api": ["test/clients/integration-api/**/*.test.ts"],
  ip: ["test/internal/ip/**/*.test.ts"],
  // The directory sync's cookie and cycle, and the platform simulator that shares its engine.
  sync: ["test/sync/**/*.test.ts", "test/testing/**/*.test.ts"],
  // The platform's side of the Provisioning API: its clients, messages, delivery engine and
  // verifier, played by the directory sync and by the testing kit's simulator and checker.
  platform: ["test/platform/**/*.test.ts", "test/sync/**/*.test.ts", "test/testing/**/*.test.ts"],
};

/**
 * Soak tests left out: each takes seconds and would run for every mutant it covers, while faster
 * tests of the same folder cover the same lines. `npm test` still runs them.
 */
const soak: Record<string, string[]> = {
  audit: ["test/clients/audit/delivery-soak.test.ts"],
};

const name = process.env.MUTATE_FOLDER ?? "provisioning";
const include = tests[name];
if (include === undefined) throw new Error(`No tests listed for MUTATE_FOLDER=${name}`);

// The base splits its files into two projects (isolated and shared workers), and projects bring
// their own include lists, which would run every test file (the size check of src/ among them,
// which instrumented sources fail): one plain run of the folder's tests instead.
const { projects: _projects, ...baseTest } = base.test ?? {};

// Set rather than merged: mergeConfig would append to the base's include list.
export default defineConfig({
  ...base,
  test: {
    ...baseTest,
    include,
    exclude: [...configDefaults.exclude, ...(soak[name] ?? [])],
    testTimeout: 20_000,
    // Mutants change values, not types: the type tests would only spawn tsc for every run.
    typecheck: { enabled: false },
  },
});
