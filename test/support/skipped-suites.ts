// vitest's globalSetup: before the run, one line per suite that will skip on this machine, with
// the variable (or the install) that enables it, so that a skipped suite is never a mystery.
import { existsSync } from "node:fs";
import { hasRuntime } from "../clients/integration-api/child-process.ts";

/** A suite that runs only where a server or a runtime is at hand, and how to give it one. */
export interface OptionalSuite {
  name: string;
  enabled: (env: NodeJS.ProcessEnv) => boolean;
  howToEnable: string;
}

export const optionalSuites: OptionalSuite[] = [
  {
    name: "PostgreSQL (PostgresUserStore, pg-boss audit, the DATABASE_URL example)",
    enabled: (env) => Boolean(env.PLATFORM_INTEGRATION_PG_URL),
    howToEnable: "set PLATFORM_INTEGRATION_PG_URL=postgres://… (.ci/steps start one)",
  },
  {
    name: "Redis (examples/redis-store)",
    enabled: (env) => Boolean(env.PLATFORM_INTEGRATION_REDIS_URL),
    howToEnable: "set PLATFORM_INTEGRATION_REDIS_URL=redis://…",
  },
  {
    name: "a running slapd (directory sync)",
    enabled: (env) => Boolean(env.PLATFORM_INTEGRATION_LDAP_URL),
    howToEnable: "set PLATFORM_INTEGRATION_LDAP_URL=ldap://… (with its bind DN and password)",
  },
  {
    name: "slapd servers of the tests' own",
    enabled: () => existsSync("/usr/sbin/slapd"),
    howToEnable: "install slapd (apt-get install slapd)",
  },
  {
    name: "Samba AD DC",
    enabled: (env) => Boolean(env.PLATFORM_INTEGRATION_AD_URL),
    howToEnable: "set PLATFORM_INTEGRATION_AD_URL=ldap://…",
  },
  {
    name: "389 Directory Server",
    enabled: (env) => Boolean(env.PLATFORM_INTEGRATION_389DS_URL),
    howToEnable: "set PLATFORM_INTEGRATION_389DS_URL=ldap://…",
  },
  {
    name: "Bun",
    enabled: () => hasRuntime("bun"),
    howToEnable: "put bun on PATH or set PLATFORM_INTEGRATION_BUN (.ci/install-runtimes.sh)",
  },
  {
    name: "Deno",
    enabled: () => hasRuntime("deno"),
    howToEnable: "put deno on PATH or set PLATFORM_INTEGRATION_DENO (.ci/install-runtimes.sh)",
  },
];

/** The lines that name each suite skipped under `env`, with how to enable it. */
export function describeSkippedSuites(env: NodeJS.ProcessEnv): string[] {
  return optionalSuites
    .filter((suite) => !suite.enabled(env))
    .map((suite) => `skipped: ${suite.name}: ${suite.howToEnable}`);
}

export default function setup(): void {
  const lines = describeSkippedSuites(process.env);
  if (lines.length > 0) console.log(`${lines.join("\n")}\n`);
}
