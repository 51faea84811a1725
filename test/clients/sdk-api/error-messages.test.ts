import { describe, expect, it } from "vitest";
import { createLicenseClient } from "../../../src/clients/license/index.ts";
import {
  createVersionClient,
  isNetworkError,
  isResponseShapeError,
} from "../../../src/clients/version/index.ts";

const refused = () => Promise.reject(new TypeError("fetch failed"));
const notJson = () => Promise.resolve(new Response("<html>proxy</html>", { status: 200 }));

// Each message names what to check in the mode the client runs in: the newer API's address is the
// baseUrl option or PLATFORM_SDK_API, and PLATFORM_INTEGRATIONAPI is not read there.
describe("the advice of an error names the address of the API in use", () => {
  it("sdk mode: a network failure and an unreadable body point at PLATFORM_SDK_API", async () => {
    const unreachable = createVersionClient({ api: "sdk", fetch: refused, retry: { limit: 0 } });
    const network = await unreachable.current().catch((caught: unknown) => caught);
    expect(isNetworkError(network)).toBe(true);
    expect(String(network)).toContain("Check the baseUrl option (else PLATFORM_SDK_API");
    expect(String(network)).toContain("the platform's SDK service is reachable");
    expect(String(network)).not.toContain("PLATFORM_INTEGRATIONAPI");

    const proxied = createVersionClient({ api: "sdk", fetch: notJson });
    const shape = await proxied.current().catch((caught: unknown) => caught);
    expect(isResponseShapeError(shape)).toBe(true);
    expect(String(shape)).toContain("PLATFORM_SDK_API");
    expect(String(shape)).toContain("points at the platform's newer in-cluster SDK API");
    expect(String(shape)).not.toContain("PLATFORM_INTEGRATIONAPI");
  });

  it("sdk mode: the tls option with the default http: address names the SDK API", async () => {
    const version = createVersionClient({ api: "sdk", tls: { rejectUnauthorized: false } });
    const error = await version.current().catch((caught: unknown) => caught);
    expect(String(error)).toContain(
      "but the base URL of the platform's newer in-cluster SDK API is http://replicated:3000",
    );
  });

  it("kots mode names the admin console's address, integration mode the baseUrl option it was given", async () => {
    const kots = createLicenseClient({ api: "kots", fetch: refused, retry: { limit: 0 } });
    const kotsError = await kots.license().catch((caught: unknown) => caught);
    expect(String(kotsError)).toContain("Check the baseUrl option (else http://kotsadm:3000)");
    expect(String(kotsError)).not.toContain("PLATFORM_");

    const classic = createVersionClient({
      api: "integration",
      baseUrl: "http://platform.test",
      fetch: refused,
      retry: { limit: 0 },
    });
    const classicError = await classic.current().catch((caught: unknown) => caught);
    expect(String(classicError)).toContain(
      "Check the baseUrl option and that the Integration API is reachable",
    );
    expect(String(classicError)).not.toContain("PLATFORM_");
  });
});
