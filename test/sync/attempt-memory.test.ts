import { describe, expect, it } from "vitest";
import type { MessageKind, SyncStop } from "../../src/platform/messages.ts";
import { createAttemptMemory } from "../../src/sync/attempt-memory.ts";

const stopAt = (kind: MessageKind, uuid: string | undefined, attempt: number): SyncStop => ({
  message: { kind, ...(uuid !== undefined && { uuid }) },
  attempt,
  durationMs: 1,
});

describe("createAttemptMemory", () => {
  it("starts every message at zero attempts, and keeps a count the message already has", () => {
    const memory = createAttemptMemory();
    expect(memory.resume({ kind: "create", uuid: "u1" }).attempts).toBe(0);
    expect(memory.resume({ kind: "create", uuid: "u1", attempts: 4 }).attempts).toBe(4);
  });

  it("carries the stopped message's attempts into the next cycle, for that kind and user only", () => {
    const memory = createAttemptMemory();
    memory.remember(stopAt("create", "u1", 3), []);
    expect(memory.resume({ kind: "create", uuid: "u1" }).attempts).toBe(3);
    // Keyed by kind and user: neither another user's create nor the same user's modify inherits it.
    expect(memory.resume({ kind: "create", uuid: "u2" }).attempts).toBe(0);
    expect(memory.resume({ kind: "modify", uuid: "u1" }).attempts).toBe(0);
  });

  it("carries each held refusal's attempts, and the stop's over a refusal of the same message", () => {
    const memory = createAttemptMemory();
    memory.remember(stopAt("delete", "u3", 5), [
      { message: { kind: "modify", uuid: "u2", attempts: 1 }, stop: stopAt("modify", "u2", 2) },
      { message: { kind: "delete", uuid: "u3", attempts: 1 }, stop: stopAt("delete", "u3", 1) },
    ]);
    expect(memory.resume({ kind: "modify", uuid: "u2" }).attempts).toBe(2);
    expect(memory.resume({ kind: "delete", uuid: "u3" }).attempts).toBe(5);
  });

  it("forgets the cycle before: only the last cycle's counts carry", () => {
    const memory = createAttemptMemory();
    memory.remember(stopAt("create", "u1", 3), [
      { message: { kind: "modify", uuid: "u2", attempts: 1 }, stop: stopAt("modify", "u2", 2) },
    ]);
    memory.remember(undefined, []);
    expect(memory.resume({ kind: "create", uuid: "u1" }).attempts).toBe(0);
    expect(memory.resume({ kind: "modify", uuid: "u2" }).attempts).toBe(0);
  });

  it("carries the attempts of a message without a user (a reset)", () => {
    const memory = createAttemptMemory();
    memory.remember(stopAt("reset", undefined, 2), []);
    expect(memory.resume({ kind: "reset" }).attempts).toBe(2);
  });
});
