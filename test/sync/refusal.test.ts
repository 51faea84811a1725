import { describe, expect, it } from "vitest";
import type { SyncStop } from "../../src/platform/messages.ts";
import type { AcknowledgedRecord } from "../../src/sync/acknowledged-state.ts";
import { createAttemptMemory } from "../../src/sync/attempt-memory.ts";
import type { PlannedMessage } from "../../src/sync/cycle-plan.ts";
import { holdRefusals, isRefusal, stagingUsername } from "../../src/sync/refusal.ts";

const answer = (message: PlannedMessage, status?: number): SyncStop => ({
  message: { kind: message.kind, ...(message.uuid !== undefined && { uuid: message.uuid }) },
  attempt: message.attempts + 1,
  ...(status !== undefined && { status }),
  durationMs: 1,
});

const rename = (uuid: string, username: string): PlannedMessage => ({
  kind: "modify",
  uuid,
  body: { uuid, username },
  attempts: 0,
  record: { uuid, username },
});

/**
 * One cycle against an application that keeps usernames unique, as the engine runs it: each
 * message the hold lets through is applied or answered 409; a refusal the hold does not take
 * stops the cycle. `held` is the acknowledged state (uuid to username), changed as messages land.
 */
async function runCycle(
  held: Map<string, string>,
  messages: PlannedMessage[],
  statusFor: (message: PlannedMessage) => number | undefined = () => undefined,
) {
  const acknowledged = {
    get: (uuid: string): AcknowledgedRecord | undefined => {
      const username = held.get(uuid);
      return username === undefined ? undefined : { uuid, username };
    },
    holderOf: (username: string, except: string) =>
      [...held].find(([uuid, name]) => name === username && uuid !== except)?.[0],
  };
  const hold = holdRefusals(acknowledged, createAttemptMemory().resume);
  const sent: string[] = [];
  async function* planned() {
    yield* messages;
  }
  for await (const message of hold.order(planned())) {
    const uuid = message.uuid as string;
    const wanted = message.body?.username as string;
    sent.push(`${uuid}:${wanted}`);
    const taken = [...held].some(([other, name]) => name === wanted && other !== uuid);
    const status = statusFor(message) ?? (taken ? 409 : undefined);
    if (status === undefined) {
      held.set(uuid, wanted);
      if (message.staging === undefined) hold.release(uuid);
    } else if (!hold.refuse(message, answer(message, status))) {
      break;
    }
  }
  return { hold, sent };
}

describe("isRefusal", () => {
  const create = rename("u1", "a");
  it("holds a user's create, modify or delete that the application answers with a 4xx about it", () => {
    for (const status of [400, 404, 409, 410, 422]) {
      expect(isRefusal(create, answer(create, status))).toBe(true);
    }
    const remove: PlannedMessage = { kind: "delete", uuid: "u1", attempts: 0 };
    expect(isRefusal(remove, answer(remove, 409))).toBe(true);
  });

  it("stops the cycle on answers about the request or the application, on a 5xx and without an answer", () => {
    for (const status of [401, 403, 405, 407, 408, 429, 500, 503]) {
      expect(isRefusal(create, answer(create, status))).toBe(false);
    }
    expect(isRefusal(create, answer(create))).toBe(false);
  });

  it("never holds a message that is not one user's (a reset, a ping)", () => {
    for (const kind of ["reset", "ping"] as const) {
      const message: PlannedMessage = { kind, attempts: 0 };
      expect(isRefusal(message, answer(message, 409))).toBe(false);
    }
    const resetOfOne: PlannedMessage = { kind: "reset", uuid: "u1", attempts: 0 };
    expect(isRefusal(resetOfOne, answer(resetOfOne, 400))).toBe(false);
  });
});

describe("holdRefusals", () => {
  it("sends a refused user's message again once the user who held the name moved off it", async () => {
    const held = new Map([["b", "x"]]);
    const { hold, sent } = await runCycle(held, [rename("a", "x"), rename("b", "y")]);
    expect(sent).toEqual(["a:x", "b:y", "a:x"]);
    expect(held).toEqual(
      new Map([
        ["a", "x"],
        ["b", "y"],
      ]),
    );
    expect(hold.settled).toBe(true);
    expect(hold.summary()).toEqual({ refused: 0, refusals: [] });
  });

  it("repeats the passes while one is accepted (a chain freed from its far end)", async () => {
    // a wants b's name, b wants c's, c moves away last: b lands on the first pass, a on the second.
    const held = new Map([
      ["b", "x"],
      ["c", "y"],
    ]);
    const { hold, sent } = await runCycle(held, [
      rename("a", "x"),
      rename("b", "y"),
      rename("c", "z"),
    ]);
    expect(sent).toEqual(["a:x", "b:y", "c:z", "a:x", "b:y", "a:x"]);
    expect(held.get("a")).toBe("x");
    expect(hold.settled).toBe(true);
  });

  it("unties a swap with a temporary username, then sends both users' messages", async () => {
    const held = new Map([
      ["a", "x"],
      ["b", "y"],
    ]);
    const { hold, sent } = await runCycle(held, [rename("a", "y"), rename("b", "x")]);
    // a's name is held by b, refused too: b (the holder) moves to its temporary name for a moment.
    expect(sent).toEqual(["a:y", "b:x", "a:y", "b:x", `b:${stagingUsername("b")}`, "a:y", "b:x"]);
    expect(held).toEqual(
      new Map([
        ["a", "y"],
        ["b", "x"],
      ]),
    );
    expect(hold.settled).toBe(true);
  });

  it("stages nothing when the holder of the name is not refused, and keeps the refusal held", async () => {
    // c holds x and is not in this cycle: no order and no staging frees x.
    const held = new Map([["c", "x"]]);
    const { hold, sent } = await runCycle(held, [rename("a", "x")]);
    expect(sent).toEqual(["a:x", "a:x"]);
    expect(hold.settled).toBe(false);
    expect(hold.summary()).toMatchObject({ refused: 1, refusals: [{ status: 409 }] });
    expect([...hold.held()].map(({ message }) => message.uuid)).toEqual(["a"]);
  });

  it("sends a refusal other than a conflict only once in the cycle, and holds the user's later messages", async () => {
    const { hold, sent } = await runCycle(
      new Map(),
      [rename("a", "x"), rename("b", "y"), { ...rename("a", "z"), kind: "modify" }],
      (message) => (message.uuid === "a" ? 422 : undefined),
    );
    expect(sent).toEqual(["a:x", "b:y"]);
    expect(hold.settled).toBe(false);
    expect(hold.summary()).toMatchObject({ refused: 1, refusals: [{ status: 422 }] });
  });

  it("is not settled when a message waited behind its user's refused one, even once that one lands", async () => {
    const held = new Map([["b", "x"]]);
    const { hold, sent } = await runCycle(held, [
      rename("a", "x"),
      rename("a", "w"),
      rename("b", "y"),
    ]);
    // a's second message waited; a's first landed on the retry; the cycle is still incomplete.
    expect(sent).toEqual(["a:x", "b:y", "a:x"]);
    expect(hold.summary().refused).toBe(0);
    expect(hold.settled).toBe(false);
  });

  it("takes a refused staging rename without holding it: the swap's own messages stay held", async () => {
    const held = new Map([
      ["a", "x"],
      ["b", "y"],
    ]);
    const { hold, sent } = await runCycle(held, [rename("a", "y"), rename("b", "x")], (message) =>
      message.staging !== undefined ? 400 : undefined,
    );
    expect(sent.at(-1)).toBe(`b:${stagingUsername("b")}`);
    expect(hold.summary().refused).toBe(2);
    // Each user's own message stays held, not the staging rename in its place.
    expect([...hold.held()].map(({ message }) => message.body?.username)).toEqual(["y", "x"]);
    expect(held.get("b")).toBe("y");
  });

  it("stages no rename for a refusal other than a conflict, nor through a holder refused for another cause", async () => {
    // a is refused for its data (422), b for a name nobody in the cycle frees: no swap to untie.
    const held = new Map([
      ["b", "x"],
      ["c", "y"],
    ]);
    const { sent } = await runCycle(held, [rename("a", "x"), rename("b", "y")], (message) =>
      message.uuid === "a" ? 422 : undefined,
    );
    expect(sent.some((line) => line.includes(stagingUsername("b")))).toBe(false);
    const through = new Map([["b", "x"]]);
    const second = await runCycle(through, [rename("a", "x"), rename("b", "y")], (message) =>
      message.uuid === "b" ? 422 : undefined,
    );
    expect(second.sent.some((line) => line.includes(stagingUsername("b")))).toBe(false);
  });

  it("never moves a holder off the name its own refused message keeps (it would be left on the temporary one)", async () => {
    // b keeps x; its modify is refused for another field. Moving b away would free x for a, and
    // leave b on sync-tmp-b when its own message is refused again.
    const held = new Map([["b", "x"]]);
    const { sent } = await runCycle(held, [rename("a", "x"), rename("b", "x")], (message) =>
      message.uuid === "b" ? 409 : undefined,
    );
    expect(sent.some((line) => line.includes(stagingUsername("b")))).toBe(false);
    expect(held.get("b")).toBe("x");
  });

  it("lets go of a user once their message is acknowledged", async () => {
    const hold = holdRefusals({ get: () => undefined, holderOf: () => undefined }, (m) => ({
      ...m,
      attempts: 0,
    }));
    const message = rename("a", "x");
    expect(hold.refuse(message, answer(message, 409))).toBe(true);
    expect(hold.settled).toBe(false);
    hold.release("a");
    expect(hold.settled).toBe(true);
  });

  it("lists the first 100 refusals and counts them all", () => {
    const hold = holdRefusals({ get: () => undefined, holderOf: () => undefined }, (m) => ({
      ...m,
      attempts: 0,
    }));
    for (let index = 0; index < 120; index++) {
      const message = rename(`u${index}`, `n${index}`);
      hold.refuse(message, answer(message, 422));
    }
    const { refused, refusals } = hold.summary();
    expect(refused).toBe(120);
    expect(refusals).toHaveLength(100);
    expect(refusals[0]?.message.uuid).toBe("u0");
  });
});
