import { afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  createSelfSignedCertificate,
  type SelfSignedCertificate,
} from "../../../src/cli/self-signed-certificate.ts";
import { serveFetch } from "../../../src/cli/serve-fetch.ts";
import {
  createConsoleClient,
  fetchPlatformCa,
  isConfigurationError,
} from "../../../src/clients/console/index.ts";
import { createFakeIntegrationApi } from "../../../src/testing/index.ts";

// Real HTTPS servers, no msw: msw would intercept node:https and answer instead of the server.
let certificate: SelfSignedCertificate;
let other: SelfSignedCertificate;
beforeAll(async () => {
  [certificate, other] = await Promise.all([
    createSelfSignedCertificate(),
    createSelfSignedCertificate(),
  ]);
});
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** A fake over real HTTPS with a self-signed certificate, whose console serves `ca`. */
async function httpsPlatform(ca: string) {
  const api = createFakeIntegrationApi({ consoleOptions: { "tls.authority.cert": ca } });
  const served = await serveFetch(api.respond, { host: "127.0.0.1", port: 0, tls: certificate });
  closers.push(served.close);
  return served.baseUrl;
}

describe("fetchPlatformCa() against a real HTTPS server", () => {
  it("refuses the unverified certificate unless trustOnFirstUse is set", async () => {
    const url = await httpsPlatform(certificate.cert);
    const error = await fetchPlatformCa({ baseUrl: url, retry: { limit: 0 } }).catch(
      (caught: unknown) => caught,
    );
    // A certificate that does not verify is a configuration problem, reported at once.
    expect(isConfigurationError(error)).toBe(true);
    expect((error as Error).message).toContain("certificate is not trusted");
  });

  it("fetches the CA once unverified; that CA then verifies every later call", async () => {
    const url = await httpsPlatform(certificate.cert);
    const ca = await fetchPlatformCa({ baseUrl: url, trustOnFirstUse: true });
    expect(ca).toBe(`${certificate.cert.trim()}\n`);
    expect(await fetchPlatformCa({ baseUrl: url, tls: { ca } })).toBe(ca);
    const console = createConsoleClient({ baseUrl: url, tls: { ca } });
    expect(await console.option("tls.authority.cert")).toBe(certificate.cert);
  });

  it("trusts whatever the first answer holds: that is the trust-on-first-use risk", async () => {
    // A man in the middle would serve his own CA: trustOnFirstUse cannot tell.
    const url = await httpsPlatform(other.cert);
    const ca = await fetchPlatformCa({ baseUrl: url, trustOnFirstUse: true });
    expect(ca).toBe(`${other.cert.trim()}\n`);
    const error = await fetchPlatformCa({ baseUrl: url, tls: { ca }, retry: { limit: 0 } }).catch(
      (caught: unknown) => caught,
    );
    expect(isConfigurationError(error)).toBe(true);
  });
});
