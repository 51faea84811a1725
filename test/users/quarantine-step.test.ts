// The quarantine step's decisions, pure: what a step keeps, clears and frees from what a store read.
import { describe, expect, it } from "vitest";
import {
  freedValues,
  refusal,
  stepRead,
  wantedValues,
  written,
} from "../../src/users/quarantine-step.ts";
import type { PendingUser } from "../../src/users/quarantine-store.ts";
import { UserConflictError } from "../../src/users/user-conflict-error.ts";

const conflict = new UserConflictError("the email is already held by another user", {
  field: "email",
});

const kept: PendingUser = {
  uuid: "a",
  operation: "create",
  patch: { uuid: "a", email: "Y@example.com", firstName: "Ann" },
  reason: "earlier",
  fields: ["email"],
  awaits: [{ field: "email", value: "y@example.com" }],
  since: "2026-01-01T00:00:00.000Z",
  attempts: 2,
  messages: 2,
};

describe("the quarantine step's decisions", () => {
  it("writes the pending record's patch with the step's own merged last", () => {
    const read = stepRead("modify", { uuid: "a", firstName: "Anna" }, kept, undefined);
    expect(read.applied).toEqual({ uuid: "a", email: "Y@example.com", firstName: "Anna" });
    expect(stepRead("modify", undefined, kept, undefined).applied).toBe(kept.patch);
    const alone = { uuid: "b", username: "bob" };
    expect(stepRead("create", alone, undefined, undefined).applied).toBe(alone);
  });

  it("names the values a write holds as the index compares them, not the stored user's", () => {
    const before = { uuid: "a", email: "X@example.com", username: "ann" };
    const read = stepRead("modify", { uuid: "a", email: "Y@Example.com" }, undefined, before);
    expect(wantedValues(["email", "username"], read)).toEqual([
      { field: "email", value: "y@example.com" },
      { field: "username", value: "ann" },
    ]);
    // A deactivated user starts again from the write alone: its old username is not wanted.
    const gone = { ...before, deactivatedAt: "2026-01-01T00:00:00.000Z" };
    const again = stepRead("create", { uuid: "a", email: "y@example.com" }, undefined, gone);
    expect(wantedValues(["email", "username"], again)).toEqual([
      { field: "email", value: "y@example.com" },
    ]);
  });

  it("keeps a refused write, clears every unique field it moves the user off, and frees those values", () => {
    const before = { uuid: "a", email: "x@example.com", username: "ann", lastName: "Lee" };
    // The email conflicts; the username moves too (to one nobody holds): both are cleared.
    const patch = { uuid: "a", email: "y@example.com", username: "anna" };
    const read = stepRead("modify", patch, undefined, before);
    const awaits = [{ field: "email" as const, value: "y@example.com" }];
    const decided = refusal(["email", "username"], read, conflict, awaits);
    expect(decided.moved).toEqual(["email", "username"]);
    expect(decided.cleared).toEqual({ uuid: "a", lastName: "Lee" });
    expect(decided.freed).toEqual([
      { field: "email", value: "x@example.com" },
      { field: "username", value: "ann" },
    ]);
    expect(decided.pending).toMatchObject({
      uuid: "a",
      operation: "modify",
      patch,
      reason: conflict.message,
      fields: ["email"],
      awaits,
      attempts: 1,
      messages: 1,
    });
  });

  it("counts a release's attempt but no message, and keeps the first message's operation and time", () => {
    const read = stepRead("modify", undefined, kept, undefined);
    const decided = refusal(["email"], read, conflict, kept.awaits);
    expect(decided.pending).toMatchObject({
      operation: "create",
      since: kept.since,
      attempts: 3,
      messages: 2,
    });
    expect(decided.cleared).toBeUndefined();
    expect(decided.freed).toEqual([]);
  });

  it("names the field the store refused for when it awaits no value it can name", () => {
    const read = stepRead("create", { uuid: "a", email: "y@example.com" }, undefined, undefined);
    expect(refusal(["email"], read, conflict, []).pending.fields).toEqual(["email"]);
  });

  it("applies, or releases with the record it read, and frees only what the write moved off", () => {
    const result = { created: false, user: { uuid: "a", email: "y@example.com" } };
    expect(written(undefined, result, ["b"])).toEqual({ outcome: "applied", result, wakes: ["b"] });
    expect(written(kept, result, [])).toEqual({
      outcome: "released",
      pending: kept,
      result,
      wakes: [],
    });
    const before = { uuid: "a", email: "X@example.com", username: "ann" };
    expect(freedValues(["email", "username"], before, result.user)).toEqual([
      { field: "email", value: "x@example.com" },
      { field: "username", value: "ann" },
    ]);
    expect(freedValues(["email"], before, { ...before, email: "x@EXAMPLE.com" })).toEqual([]);
  });
});
