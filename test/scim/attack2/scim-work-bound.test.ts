// Attack 2: one request's work. The bounds are each on one factor (1,000 operations, 1,000 values
// per attribute, 4,096 characters per filter, 1 MiB per body) and never on their product: a PATCH
// of 230 `remove emails[<4 KiB filter of 210 co terms>].display` operations (1 MiB) against a user
// with 1,000 emails evaluated ~48 million comparisons and held the event loop for 64 s here (every
// other request of the process, Provisioning API included, waited). The test counts the
// comparisons (String.prototype.includes, what `co` runs) rather than timing anything.
import { afterEach, describe, expect, it } from "vitest";
import { MemoryUserStore } from "../../../src/provisioning/index.ts";
import { createScimHandler } from "../../../src/scim/index.ts";
import { clientOf, patchOp, token } from "../attack/support.ts";

const original = String.prototype.includes;
afterEach(() => {
  String.prototype.includes = original;
});

describe("one PATCH's work is bounded by its size, not by operations x values x filter terms", () => {
  it("20 operations with long value filters against 1,000 emails", async () => {
    const scim = clientOf(createScimHandler({ store: new MemoryUserStore(), token }));
    const emails = Array.from({ length: 1000 }, (_, i) => ({ value: `u${i}@x.io`, type: `t${i}` }));
    const id = (await scim("POST", "/Users", { userName: "cpu", emails })).body.id;
    let filter = "";
    for (let term = 0; ; term++) {
      const next = `${filter === "" ? "" : `${filter} or `}value co "zz${term}"`;
      if (next.length > 4000) break;
      filter = next;
    }
    const body = JSON.stringify({
      schemas: [patchOp],
      Operations: Array.from({ length: 20 }, () => ({
        op: "remove",
        path: `emails[${filter}].display`,
      })),
    });
    let comparisons = 0;
    String.prototype.includes = function (this: string, ...args: [string, number?]) {
      comparisons++;
      return original.apply(this, args);
    };
    const answer = await scim("PATCH", `/Users/${id}`, body);
    String.prototype.includes = original;
    expect([200, 400, 413]).toContain(answer.status);
    // ~80 KB of operations on a ~40 KB user: allow 20 comparisons per byte (2.4 million);
    // it runs ~8 million (20 operations x 1,000 values x 210 terms, twice).
    expect(comparisons, "co comparisons for one PATCH").toBeLessThan(20 * (body.length + 40_000));
  });
});
