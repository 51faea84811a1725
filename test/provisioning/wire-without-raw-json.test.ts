// wire.ts on a runtime whose JSON.parse gives a reviver no source text (no JSON.rawJSON): the
// folder is imported once, at collection, with JSON.rawJSON removed. A re-import inside a test
// would make StrykerJS count every module-level constant of the folder as covered by that one
// test, and run their mutants against it alone.
import { describe, expect, it } from "vitest";
import { call, errorOf } from "./helpers.ts";

const json = JSON as unknown as { rawJSON?: unknown };
const rawJSON = json.rawJSON;
delete json.rawJSON;
const fresh = await import("../../src/provisioning/index.ts").finally(() => {
  json.rawJSON = rawJSON;
});

describe("numbers on a runtime whose JSON.parse gives no source text", () => {
  it("refuses a number rather than store a value that may have changed, and still takes strings", async () => {
    const store = new fresh.MemoryUserStore();
    const handler = fresh.createProvisioningHandler({ store });
    const number = await call(handler, "POST", "/v1/user/create", '{"uuid":"u1","user_id":1.50}');
    expect([number.status, errorOf(number).error]).toEqual([400, "invalid_user"]);
    expect(errorOf(number).message).toContain("no source text");
    const strings = '{"uuid":"u2","groups":["a",{"b":null}]}';
    expect((await call(handler, "POST", "/v1/user/create", strings)).status).toBe(201);
    expect(await store.list()).toEqual([{ uuid: "u2", extra: { groups: ["a", { b: null }] } }]);
  });
});
