// Attack 3: the SCIM checker reads at most 64 KiB of an answer (A16's cutOff). Its pagination
// check pages with Okta's count=100 once the service holds more than 20 users: a page of 100
// ordinary Entra users (~900 bytes each, as createScimHandler itself serves them) is ~90 KiB, so
// a conforming service with real users fails the check.
import { describe, expect, it } from "vitest";
import { MemoryUserStore } from "../../../src/provisioning/index.ts";
import { createScimHandler } from "../../../src/scim/index.ts";
import { runConformance } from "../../../src/testing/index.ts";
import { token } from "../attack/support.ts";
import { entraUser, scim } from "../helpers.ts";

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

describe("the checker on a service with real users", () => {
  it("createScimHandler holding 120 Entra-shaped users passes the pagination check", async () => {
    const handler = createScimHandler({ store: new MemoryUserStore(), token, logger: quiet });
    for (let i = 0; i < 120; i++) {
      const user = {
        ...entraUser(`employee.number-${i}@contoso.example`),
        title: "Senior Software Engineer, Platform Integration",
        "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": {
          employeeNumber: `E${100000 + i}`,
          department: "Research and Development",
          costCenter: "CC-4711",
          manager: { value: "b3f0c2a4-9a1e-4c57-8d7e-6f1e2a3b4c5d" },
        },
      };
      expect((await scim(handler, "POST", "/scim/v2/Users", user)).status).toBe(201);
    }
    const page = await scim(handler, "GET", "/scim/v2/Users?startIndex=1&count=100");
    const bytes = JSON.stringify(page.body).length;
    const report = await runConformance(handler, { scim: { token } });
    const failed = report.results.filter((result) => !result.passed).map((result) => result.name);
    expect({ failed, pageKiB: Math.round(bytes / 1024) }).toEqual({
      failed: [],
      pageKiB: expect.any(Number) as number,
    });
  });
});
