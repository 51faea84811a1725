import { constants, generateKeyPairSync, sign } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createLicenseClient, verifyLicenseField } from "../../../src/clients/license/index.ts";

// The docs' signature examples, run as written against a tampered service (issue 39's fixes:
// C1, a downgrade to the unsigned Integration API; m1, an Integer "" carrying another field's
// signature of ""; M6, a dropped expires_at). Each example must refuse, and accept the genuine.

const read = (path: string) => readFileSync(new URL(`../../../${path}`, import.meta.url), "utf8");
const readme = read("README.md");

const keys = generateKeyPairSync("rsa", { modulusLength: 2048 });
const APP_PUBLIC_KEY = keys.publicKey.export({ type: "spki", format: "pem" }).toString();
const signed = (text: string) =>
  sign("sha256", Buffer.from(text), {
    key: keys.privateKey,
    padding: constants.RSA_PKCS1_PSS_PADDING,
    saltLength: constants.RSA_PSS_SALTLEN_MAX_SIGN,
  }).toString("base64");

/** The README block of `section` that contains `marker`, from `from` up to `to` (exclusive). */
function readmeCode(section: string, marker: string, from: string, to?: string): string {
  const start = readme.indexOf(`\n${section}\n`);
  const blocks = readme.slice(start).matchAll(/```ts\n([\s\S]*?)```/g);
  const block = [...blocks].map((match) => match[1] ?? "").find((code) => code.includes(marker));
  if (block === undefined) throw new Error(`No block with ${marker} under ${section}`);
  const body = block.slice(block.indexOf(from));
  return to === undefined ? body : body.slice(0, body.indexOf(to));
}

function tsdocExample(path: string): string {
  const source = read(path);
  const match = /@example\n \* ```ts\n([\s\S]*?) \* ```/.exec(source);
  const code = (match?.[1] ?? "").replace(/^ \* ?/gm, "");
  return code.replace(/^import .*$/gm, "");
}

/** Runs an example with the names it uses; resolves with what it returned or rejects. */
function run(code: string, tail = ""): Promise<unknown> {
  const AsyncFunction = Object.getPrototypeOf(async () => undefined).constructor as new (
    ...args: string[]
  ) => (...values: unknown[]) => Promise<unknown>;
  const body = `${code}\n${tail}`;
  return new AsyncFunction("createLicenseClient", "verifyLicenseField", "APP_PUBLIC_KEY", body)(
    createLicenseClient,
    verifyLicenseField,
    APP_PUBLIC_KEY,
  );
}

// What the tampered or genuine service serves, by path.
let routes: Record<string, unknown> = {};
const server = createServer((request, response) => {
  const body = routes[request.url ?? ""];
  if (body === undefined) {
    response.writeHead(404).end("404 page not found");
    return;
  }
  response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
});
let url = "";
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  vi.stubEnv("PLATFORM_SDK_API", url);
});
afterAll(() => {
  vi.unstubAllEnvs();
  server.close();
});

const genuineSeats = {
  name: "seat_count",
  value: 10,
  valueType: "Integer",
  signature: { v2: signed("10") },
};
// Legacy route: unsigned, forged. Newer route: the same forgery without a signature.
const downgraded = {
  "/license/v1/field/seat_count": { field: "seat_count", value: "100000" },
  "/api/v1/license/fields/seat_count": {
    name: "seat_count",
    value: 100000,
    valueType: "Integer",
    signature: {},
  },
};
// An Integer left "" with the signature of another field's "" (expires_at's "never expires").
const transplanted = {
  "/api/v1/license/fields/seat_count": {
    name: "seat_count",
    value: "",
    valueType: "Integer",
    signature: { v2: signed("") },
  },
};

const examples = {
  "README, One codebase": () =>
    readmeCode(
      "## One codebase, every install method",
      "verifyLicenseField(seats",
      "const license = createLicenseClient(",
      "const app =",
    ),
  "verifyLicenseField's TSDoc": () => tsdocExample("src/clients/license/verify-license-field.ts"),
};

describe.each(Object.entries(examples))("the %s signature example", (_, code) => {
  it("accepts the vendor's signed value", async () => {
    routes = { "/api/v1/license/fields/seat_count": genuineSeats };
    await expect(run(code())).resolves.toBeUndefined();
  });

  it("C1: is not downgraded by a PLATFORM_INTEGRATIONAPI set in the pod", async () => {
    vi.stubEnv("PLATFORM_INTEGRATIONAPI", url);
    try {
      routes = downgraded;
      await expect(run(code())).rejects.toThrow();
    } finally {
      vi.stubEnv("PLATFORM_INTEGRATIONAPI", "");
    }
  });

  it('m1: refuses an Integer "" carrying another field\'s signature of ""', async () => {
    routes = transplanted;
    await expect(run(code())).rejects.toThrow();
  });
});

describe("the README's signature advice (C1, M6)", () => {
  const section = readme.slice(readme.indexOf("\n### What a signature proves\n"));

  it('says why a check pins api "sdk" and never gates on capabilities', () => {
    expect(readme).not.toContain("if (license.capabilities.signedLicenseFields");
    expect(section).toContain('pins `api: "sdk"`');
    expect(section).toContain('`"unsigned"` included');
  });

  const expiryExample = () =>
    readmeCode("### What a signature proves", 'license.field("expires_at")', "const expiry");
  const license = 'const license = createLicenseClient({ api: "sdk" });\n';

  it('M6: its expires_at example refuses a dropped expires_at and reads a signed "" as never', async () => {
    routes = {};
    await expect(run(license + expiryExample())).rejects.toThrow("missing");
    routes = {
      "/api/v1/license/fields/expires_at": {
        name: "expires_at",
        value: "",
        valueType: "String",
        signature: { v2: signed("") },
      },
    };
    await expect(run(license + expiryExample(), "return expiresAt;")).resolves.toBeUndefined();
    routes = {
      "/api/v1/license/fields/expires_at": {
        name: "expires_at",
        value: "2030-01-01T00:00:00Z",
        valueType: "String",
        signature: { v2: signed("2030-01-01T00:00:00Z") },
      },
    };
    await expect(run(license + expiryExample(), "return expiresAt;")).resolves.toEqual(
      new Date("2030-01-01T00:00:00Z"),
    );
    const dropped = { ...routes, "/api/v1/license/fields/expires_at": undefined };
    routes = dropped as Record<string, unknown>;
    await expect(run(license + expiryExample())).rejects.toThrow();
  });

  it("M6: the typed expirationTime says it is unverified", () => {
    const records = read("src/clients/license/read-license.ts");
    expect(records).toContain("From the field `expires_at` as served, unverified");
  });
});
