// Attack 3: the PATCH work budget (maxPatchWork, 200,000 units) counts values, not their size,
// and the resource's bounds (512 KiB) are checked only after every operation. One request under
// the 1 MiB body limit then makes ~900 MB of work (measured: ~3 s of a blocked event loop against
// ~26 ms for the same request with small values), and is answered 200.
import { afterEach, describe, expect, it, vi } from "vitest";
import { MemoryUserStore } from "../../../src/provisioning/index.ts";
import { createScimHandler } from "../../../src/scim/index.ts";
import { clientOf, patchOp, token } from "../attack/support.ts";

afterEach(() => {
  vi.restoreAllMocks();
});

async function victim() {
  const store = new MemoryUserStore({});
  const scim = clientOf(createScimHandler({ store, token }));
  const id = (await scim("POST", "/Users", { userName: "victim" })).body.id as string;
  return { scim, id };
}

describe("the PATCH work budget", () => {
  it("a request of cheap operations over one huge value is refused or costs work in proportion to its size", async () => {
    const { scim, id } = await victim();
    const operations: unknown[] = [
      { op: "add", path: "emails", value: [{ value: "x", display: "y".repeat(900_000) }] },
    ];
    for (let i = 0; i < 997; i++) {
      operations.push({ op: "add", path: "emails", value: [{ value: "a" }] });
    }
    operations.push({ op: "remove", path: "emails" });
    const body = JSON.stringify({ schemas: [patchOp], Operations: operations });
    expect(body.length).toBeLessThan(1024 * 1024);
    // Work measured as the characters serialized while the request runs (deterministic, no timer).
    const real = JSON.stringify;
    let serialized = 0;
    vi.spyOn(JSON, "stringify").mockImplementation((...args: Parameters<typeof real>) => {
      const text = real(...args);
      serialized += typeof text === "string" ? text.length : 0;
      return text;
    });
    const answer = await scim("PATCH", `/Users/${id}`, body);
    vi.restoreAllMocks();
    if (answer.status === 400) return; // refused (tooMany / invalidValue): bounded
    // Answered: the work must stay within a small multiple of what the request carried.
    expect({ status: answer.status, serializedMB: Math.round(serialized / 1e6) }).toEqual({
      status: answer.status,
      serializedMB: expect.toSatisfy((mb: number) => mb < 50) as number,
    });
  });

  it("removing 300 of a user's 1,000 entitlements by a value list (Entra's remove form) is not refused tooMany", async () => {
    const { scim, id } = await victim();
    const entitlements = Array.from({ length: 1000 }, (_, i) => ({ value: `ent-${i}` }));
    expect(
      (
        await scim("PATCH", `/Users/${id}`, {
          schemas: [patchOp],
          Operations: [{ op: "add", path: "entitlements", value: entitlements }],
        })
      ).status,
    ).toBe(200);
    const answer = await scim("PATCH", `/Users/${id}`, {
      schemas: [patchOp],
      Operations: [{ op: "Remove", path: "entitlements", value: entitlements.slice(0, 300) }],
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.entitlements).toHaveLength(700);
  });
});
