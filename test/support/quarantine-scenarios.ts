// The quarantine's rules, run by the handler over each bundled store: the memory, SQLite and
// PostgreSQL suites call these with a factory of their own store.
import { describe, expect, it } from "vitest";
import type { Logger } from "../../src/internal/logger.ts";
import {
  createProvisioningHandler,
  type ProvisioningChange,
  type ProvisioningHandlerOptions,
  type QuarantineEvent,
  type StoreRulesOptions,
  type UserRecord,
  type UserStore,
} from "../../src/provisioning/index.ts";
import { call } from "../provisioning/helpers.ts";

/** A store with the bundled stores' read methods, whatever their sync-or-async shape. */
export interface ReadableStore extends UserStore {
  get(uuid: string): UserRecord | undefined | Promise<UserRecord | undefined>;
  list(options?: { includeDeactivated?: boolean }): UserRecord[] | Promise<UserRecord[]>;
  count(options?: { includeDeactivated?: boolean }): number | Promise<number>;
}

export interface QuarantineSubject {
  /** A fresh, empty store with these rules. */
  create(rules: StoreRulesOptions): Promise<ReadableStore>;
}

export function recordingLogger() {
  const lines: { level: string; message: string; fields?: unknown }[] = [];
  const at = (level: string) => (message: string, fields?: unknown) =>
    void lines.push({ level, message, fields });
  const logger: Logger = {
    debug: at("debug"),
    info: at("info"),
    warn: at("warn"),
    error: at("error"),
  };
  return { logger, lines };
}

export const secret = "pa55-w0rd-never-shown";

/** A handler with the quarantine over `store`, recording its changes, events and log. */
export function quarantinedHandler(
  store: UserStore,
  options: Partial<ProvisioningHandlerOptions> = {},
) {
  const changes: ProvisioningChange[] = [];
  const events: QuarantineEvent[] = [];
  const { logger, lines } = recordingLogger();
  const handler = createProvisioningHandler({
    store,
    quarantine: true,
    logger,
    onChange: (change) => void changes.push(change),
    onQuarantine: (event) => void events.push(event),
    ...options,
  });
  const create = (user: object) => call(handler, "POST", "/v1/user/create", user);
  const modify = (user: object) => call(handler, "POST", "/v1/user/modify", user);
  const remove = (uuid: string) => call(handler, "DELETE", `/v1/user/${uuid}`);
  return { handler, changes, events, lines, create, modify, remove };
}

export function quarantineScenarios(name: string, subject: QuarantineSubject): void {
  const unique = { unique: ["username", "email"] } as const;

  describe(`${name}: the quarantine`, () => {
    it("resolves an email swap once its last message arrives, and reports every change", async () => {
      const store = await subject.create(unique);
      const app = quarantinedHandler(store);
      expect((await app.create({ uuid: "a", username: "ann", email: "ann@x.io" })).status).toBe(
        201,
      );
      expect((await app.create({ uuid: "b", username: "bob", email: "bob@x.io" })).status).toBe(
        201,
      );
      // The directory swaps them: a takes bob's email first, while bob still holds it.
      expect((await app.modify({ uuid: "a", email: "BOB@x.io" })).status).toBe(204);
      expect((await app.handler.quarantined()).map((kept) => [kept.uuid, kept.fields])).toEqual([
        ["a", ["email"]],
      ]);
      expect(await store.get("a")).toEqual({ uuid: "a", username: "ann" });
      // Bob's modify takes a's old email and frees his own, which a awaits.
      expect((await app.modify({ uuid: "b", email: "ann@x.io" })).status).toBe(204);
      expect(await app.handler.quarantined()).toEqual([]);
      expect(await store.get("a")).toEqual({ uuid: "a", username: "ann", email: "BOB@x.io" });
      expect(await store.get("b")).toEqual({ uuid: "b", username: "bob", email: "ann@x.io" });
      // Every stored change, the email the conflict cleared included (finding 8).
      expect(app.changes.slice(2).map((change) => [change.type, change.uuid, change.user])).toEqual(
        [
          ["updated", "a", { uuid: "a", username: "ann" }],
          ["updated", "b", { uuid: "b", username: "bob", email: "ann@x.io" }],
          ["updated", "a", { uuid: "a", username: "ann", email: "BOB@x.io" }],
        ],
      );
      expect(app.events.map((event) => [event.type, event.pending.uuid])).toEqual([
        ["kept", "a"],
        ["released", "a"],
      ]);
      expect(app.handler.stats().quarantine).toEqual({
        kept: 1,
        released: 1,
        discarded: 0,
        waiting: 0,
      });
    });

    // Finding 1. Catches: a conflict that clears only the first conflicting field.
    it("resolves a swap of two users over two unique fields", async () => {
      const store = await subject.create(unique);
      const app = quarantinedHandler(store);
      await app.create({ uuid: "a", username: "ann", email: "ann@x.io" });
      await app.create({ uuid: "b", username: "bob", email: "bob@x.io" });
      expect((await app.modify({ uuid: "a", username: "bob", email: "bob@x.io" })).status).toBe(
        204,
      );
      const [kept] = await app.handler.quarantined();
      expect(kept?.fields).toEqual(["username", "email"]);
      expect(kept?.awaits).toEqual([
        { field: "username", value: "bob" },
        { field: "email", value: "bob@x.io" },
      ]);
      expect(await store.get("a")).toEqual({ uuid: "a" });
      expect((await app.modify({ uuid: "b", username: "ann", email: "ann@x.io" })).status).toBe(
        204,
      );
      expect(await app.handler.quarantined()).toEqual([]);
      expect(await store.get("a")).toEqual({ uuid: "a", username: "bob", email: "bob@x.io" });
      expect(await store.get("b")).toEqual({ uuid: "b", username: "ann", email: "ann@x.io" });
    });

    // Found by the replicas' model test (seed 644023111). Catches: a kept message that clears
    // only its conflicting fields, while the value it also moves off (a username) is the one the
    // other side of the swap waits for.
    it("resolves a swap in which the kept side also moves off a value that does not conflict", async () => {
      const store = await subject.create(unique);
      const app = quarantinedHandler(store);
      await app.create({ uuid: "a", username: "ann", email: "ann@x.io" });
      await app.create({ uuid: "b", username: "fay" });
      // a takes b's values (fay, no email); b takes a's (ann, ann@x.io).
      await app.modify({ uuid: "a", username: "fay", email: null });
      // Kept: a's username conflicts; both values a moves off are freed.
      expect(await store.get("a")).toEqual({ uuid: "a" });
      await app.modify({ uuid: "b", username: "ann", email: "ann@x.io" });
      expect(await app.handler.quarantined()).toEqual([]);
      expect(await store.get("a")).toEqual({ uuid: "a", username: "fay" });
      expect(await store.get("b")).toEqual({ uuid: "b", username: "ann", email: "ann@x.io" });
    });

    it("resolves a rotation of three users over two fields, in any order of its messages", async () => {
      const users = ["a", "b", "c"];
      const value = (index: number) => ({ username: `n${index}`, email: `e${index}@x.io` });
      for (const order of [
        [0, 1, 2],
        [2, 1, 0],
        [1, 0, 2],
      ]) {
        const store = await subject.create(unique);
        const app = quarantinedHandler(store);
        for (const [index, uuid] of users.entries()) await app.create({ uuid, ...value(index) });
        // Each user takes the next one's values.
        for (const index of order) {
          expect((await app.modify({ uuid: users[index], ...value((index + 1) % 3) })).status).toBe(
            204,
          );
        }
        expect(await app.handler.quarantined(), `order ${order}`).toEqual([]);
        for (const [index, uuid] of users.entries()) {
          expect(await store.get(uuid)).toEqual({ uuid, ...value((index + 1) % 3) });
        }
      }
    });

    it("merges the messages of a kept user into one record, and applies them once it is free", async () => {
      const store = await subject.create(unique);
      const app = quarantinedHandler(store);
      await app.create({ uuid: "a", email: "taken@x.io" });
      expect((await app.create({ uuid: "c", email: "taken@x.io", first_name: "C" })).status).toBe(
        201,
      );
      for (let index = 0; index < 20; index++) {
        expect(
          (await app.modify({ uuid: "c", first_name: `C${index}`, last_name: "Lee" })).status,
        ).toBe(204);
      }
      // Finding 4: one record, not one row per message.
      const kept = await app.handler.quarantined();
      expect(kept).toHaveLength(1);
      expect(kept[0]).toMatchObject({
        uuid: "c",
        operation: "create",
        fields: ["email"],
        messages: 21,
        attempts: 21,
        user: { uuid: "c", email: "taken@x.io", firstName: "C19", lastName: "Lee" },
      });
      expect(Date.parse(kept[0]?.since ?? "")).not.toBeNaN();
      expect(await store.get("c")).toBeUndefined();
      // A write that frees nothing does not try it.
      await app.create({ uuid: "d", email: "d@x.io" });
      expect((await app.handler.quarantined())[0]?.attempts).toBe(21);
      await app.modify({ uuid: "a", email: "elsewhere@x.io" });
      expect(await store.get("c")).toEqual({
        uuid: "c",
        email: "taken@x.io",
        firstName: "C19",
        lastName: "Lee",
      });
      expect(
        app.changes.filter((change) => change.uuid === "c").map((change) => change.type),
      ).toEqual(["created"]);
      expect(app.events.filter((event) => event.type === "released")).toHaveLength(1);
      expect(app.events.filter((event) => event.type === "kept")).toHaveLength(21);
    });

    // Catches: kept messages released one at a time, where an earlier message waiting for a value
    // someone else took for good blocks a later one that no longer needs it.
    it("applies a later message that replaces the value an earlier one waited for", async () => {
      const store = await subject.create(unique);
      const app = quarantinedHandler(store);
      await app.create({ uuid: "z", email: "wanted@x.io" });
      await app.create({ uuid: "x", email: "x@x.io" });
      await app.modify({ uuid: "x", email: "wanted@x.io" });
      await app.modify({ uuid: "x", email: "other@x.io" });
      expect(await store.get("x")).toEqual({ uuid: "x", email: "other@x.io" });
      expect(await app.handler.quarantined()).toEqual([]);
    });

    it("lets a delete apply over a kept user and discard it", async () => {
      const store = await subject.create(unique);
      const app = quarantinedHandler(store);
      await app.create({ uuid: "a", email: "taken@x.io" });
      await app.create({ uuid: "c", email: "taken@x.io" });
      await app.modify({ uuid: "c", username: "cee" });
      expect((await app.remove("c")).status).toBe(204);
      expect(await app.handler.quarantined()).toEqual([]);
      await app.remove("a");
      expect(await store.get("c")).toBeUndefined();
      expect(app.events.map((event) => event.type)).toEqual(["kept", "kept", "discarded"]);
      expect(app.handler.stats().quarantine).toMatchObject({ discarded: 1, waiting: 0 });
    });

    // Finding 3. Catches: a delete and the discard of the user's kept messages as two steps, with
    // another replica releasing the user between them.
    it("never brings back a deleted user when another replica frees its value meanwhile", async () => {
      const store = await subject.create(unique);
      const replica = quarantinedHandler(store);
      let between: (() => Promise<unknown>) | undefined;
      const shared = new Proxy(store, {
        get(target, key, receiver) {
          const value = Reflect.get(target, key, receiver);
          if (key !== "delete" && key !== "deleteQuarantined") {
            return typeof value === "function" ? value.bind(target) : value;
          }
          return async (uuid: string) => {
            const result = await value.call(target, uuid);
            const run = between;
            between = undefined;
            await run?.();
            return result;
          };
        },
      });
      const app = quarantinedHandler(shared);
      await app.create({ uuid: "a", email: "taken@x.io" });
      await app.create({ uuid: "c", email: "taken@x.io" });
      between = () => replica.modify({ uuid: "a", email: "elsewhere@x.io" });
      expect((await app.remove("c")).status).toBe(204);
      expect(await store.get("c")).toBeUndefined();
      expect(await app.handler.quarantined()).toEqual([]);
    });

    // Finding 4. Catches: a pass over everything kept after each write.
    it("makes the same store calls for a write however many users are kept", async () => {
      const store = await subject.create(unique);
      let calls = 0;
      const counted = new Proxy(store, {
        get(target, key, receiver) {
          const value = Reflect.get(target, key, receiver);
          if (typeof value !== "function") return value;
          return (...args: unknown[]) => {
            calls++;
            return value.apply(target, args);
          };
        },
      });
      const app = quarantinedHandler(counted);
      await app.create({ uuid: "holder", email: "taken@x.io" });
      const callsFor = async (uuid: string) => {
        calls = 0;
        expect((await app.create({ uuid, username: uuid })).status).toBe(201);
        return calls;
      };
      const none = await callsFor("first");
      for (let index = 0; index < 30; index++) {
        await app.create({ uuid: `kept-${index}`, email: "taken@x.io" });
      }
      expect((await app.handler.quarantined()).length).toBe(30);
      expect(await callsFor("second")).toBe(none);
      expect(none).toBeLessThanOrEqual(1);
      // Freeing the value tries those who await it, in order: one takes it.
      await app.remove("holder");
      expect((await store.get("kept-0"))?.email).toBe("taken@x.io");
      expect((await app.handler.quarantined()).length).toBe(29);
    });

    // Finding 5. Catches: a retry from a hook that waits for the turn its caller holds.
    it("serves retryQuarantined() from onQuarantine and from onChange without waiting on itself", async () => {
      for (const hook of ["onQuarantine", "onChange"] as const) {
        const store = await subject.create(unique);
        const retries: unknown[] = [];
        let handler: { retryQuarantined(): Promise<unknown> } | undefined;
        const app = quarantinedHandler(store, {
          [hook]: async () => {
            retries.push(await handler?.retryQuarantined());
          },
        });
        handler = app.handler;
        await app.create({ uuid: "a", email: "taken@x.io" });
        expect((await app.create({ uuid: "c", email: "taken@x.io" })).status).toBe(201);
        // Freed behind the hook's back; the hook's retry (in c's own turn) applies it right after.
        await store.delete("a");
        expect((await app.modify({ uuid: "c", first_name: "C" })).status).toBe(204);
        expect(await store.get("c"), hook).toEqual({
          uuid: "c",
          email: "taken@x.io",
          firstName: "C",
        });
        expect(retries.length, hook).toBeGreaterThan(0);
        expect(await app.handler.quarantined()).toEqual([]);
      }
    });

    // Attack finding 1. Catches: a retry from a hook that runs a pass nested in the pass whose
    // hook called it (each kept user then retries every other: 7 stuck users never answered), and
    // retries from anywhere that each run their own pass.
    it("coalesces retryQuarantined() calls: one pass in flight, none nested, bounded store calls", async () => {
      const stuck = 7;
      const store = await subject.create(unique);
      let releases = 0;
      const release = store.releaseQuarantined?.bind(store);
      store.releaseQuarantined = async (uuid: string) => {
        // Far past the bound: the old code's storm fails here instead of running for minutes.
        if (++releases > 500) throw new Error("storm: more than 500 releases");
        return (release as NonNullable<typeof release>)(uuid);
      };
      let retryOn = false;
      const results: unknown[] = [];
      let handler: { retryQuarantined(): Promise<unknown> } | undefined;
      const app = quarantinedHandler(store, {
        // As the docs allow: retry on every kept message.
        onQuarantine: async (event) => {
          if (retryOn && event.type === "kept") results.push(await handler?.retryQuarantined());
        },
      });
      handler = app.handler;
      await app.create({ uuid: "holder", email: "dup@x.io" });
      for (let index = 0; index < stuck; index++) {
        await app.create({ uuid: `u${index}`, email: "dup@x.io" });
      }
      retryOn = true;
      expect((await app.create({ uuid: "new", email: "dup@x.io" })).status).toBe(201);
      // One pass from the write's hook, one from the deferred try of its own user: each tries the
      // kept users once; the hooks of a pass join it.
      expect(releases).toBeLessThanOrEqual(2 * (stuck + 1));
      expect(results.length).toBeGreaterThan(0);
      retryOn = false;
      // Five calls at once from outside: the pass in flight, and one pass after it for the rest.
      releases = 0;
      const outside = await Promise.all(
        Array.from({ length: 5 }, () => app.handler.retryQuarantined()),
      );
      expect(releases).toBeLessThanOrEqual(2 * (stuck + 1));
      expect(outside.every((result) => result.kept === stuck + 1)).toBe(true);
      expect((await app.handler.quarantined()).length).toBe(stuck + 1);
    });

    // Attack finding 2 (the option changed between runs: on, off, on). Catches: a handler with
    // the option off that deletes with a plain delete (the kept create of a deleted user comes
    // back on the next run's retry) or writes with a plain upsert (an older kept modify applies
    // later over the newer acknowledged one).
    it("turned off between runs, lets no kept record apply later over an acknowledged message", async () => {
      const store = await subject.create(unique);
      const on = quarantinedHandler(store);
      await on.create({ uuid: "y", email: "v@x.io" });
      await on.create({ uuid: "x", email: "x@x.io", first_name: "Old", last_name: "L" });
      await on.create({ uuid: "z", email: "v@x.io", first_name: "Zed" });
      // Kept: y holds v@x.io; x's email is cleared, its last name stays.
      expect((await on.modify({ uuid: "x", email: "v@x.io", first_name: "Mid" })).status).toBe(204);
      expect((await on.handler.quarantined()).map((kept) => kept.uuid)).toEqual(["z", "x"]);
      const off = quarantinedHandler(store, { quarantine: false });
      // z's create was kept (never stored); the platform got 204 for its delete.
      expect((await off.remove("z")).status).toBe(204);
      expect((await off.modify({ uuid: "x", email: "n@x.io", first_name: "New" })).status).toBe(
        204,
      );
      expect((await off.modify({ uuid: "y", email: "w@x.io" })).status).toBe(204);
      expect(
        off.lines.filter((line) => line.message.includes("quarantine option is off")),
      ).toHaveLength(1);
      expect(await store.get("x")).toEqual({
        uuid: "x",
        email: "n@x.io",
        firstName: "New",
        lastName: "L",
      });
      const again = quarantinedHandler(store);
      expect(await again.handler.retryQuarantined()).toEqual({ released: 0, kept: 0 });
      expect(await store.get("z")).toBeUndefined();
      expect(await store.get("x")).toEqual({
        uuid: "x",
        email: "n@x.io",
        firstName: "New",
        lastName: "L",
      });
    });

    // Attack finding 3. Catches: a woken user whose release failed once (the store busy, a
    // connection lost), left waiting for good on a value that is free, and a failure reported
    // on every later try.
    it("tries again, on later requests, a woken user whose release failed, reporting it once", async () => {
      const store = await subject.create(unique);
      let failures = 0;
      const release = store.releaseQuarantined?.bind(store);
      store.releaseQuarantined = async (uuid: string) => {
        if (failures > 0) {
          failures--;
          throw new Error("database is locked (injected)");
        }
        return (release as NonNullable<typeof release>)(uuid);
      };
      const errors: string[] = [];
      const app = quarantinedHandler(store, {
        onError: (error, context) => void errors.push(`${context.uuid} ${String(error)}`),
      });
      await app.create({ uuid: "a", email: "a@x.io" });
      await app.create({ uuid: "b", email: "b@x.io" });
      expect((await app.modify({ uuid: "a", email: "b@x.io" })).status).toBe(204);
      // b's modify frees b@x.io and wakes a, whose release fails: b is stored and answered.
      failures = 2;
      expect((await app.modify({ uuid: "b", email: "a@x.io" })).status).toBe(204);
      expect((await store.get("a"))?.email).toBeUndefined();
      // Unrelated traffic: the first request's try fails again (not reported again), the next
      // one's applies it.
      await app.create({ uuid: "other-1" });
      expect((await store.get("a"))?.email).toBeUndefined();
      await app.create({ uuid: "other-2" });
      expect(await store.get("a")).toEqual({ uuid: "a", email: "b@x.io" });
      expect(await app.handler.quarantined()).toEqual([]);
      expect(errors).toEqual(["a Error: database is locked (injected)"]);
    });

    // Attack finding 7. Catches: a freed value that wakes every user waiting for it (one takes
    // it, the rest are tried for nothing, over and over as it passes from holder to holder), and
    // a woken user that does not take it without passing it on.
    it("wakes the oldest waiter of a freed value, and the next only when it does not take it", async () => {
      const store = await subject.create(unique);
      let releases = 0;
      const release = store.releaseQuarantined?.bind(store);
      store.releaseQuarantined = async (uuid: string) => {
        releases++;
        return (release as NonNullable<typeof release>)(uuid);
      };
      const app = quarantinedHandler(store);
      await app.create({ uuid: "holder", email: "team@x.io" });
      await app.create({ uuid: "other", username: "busy" });
      // k0 also waits for a username that stays held: woken, it cannot take the email.
      await app.create({ uuid: "k0", username: "busy", email: "team@x.io" });
      for (let index = 1; index <= 20; index++) {
        await app.create({ uuid: `k${index}`, email: "team@x.io" });
      }
      releases = 0;
      await app.remove("holder");
      // k0 is tried and passes the email on to k1, who takes it; nobody else is tried.
      expect(releases).toBe(2);
      expect((await store.get("k1"))?.email).toBe("team@x.io");
      releases = 0;
      await app.modify({ uuid: "k1", email: "k1@x.io" });
      expect(releases).toBe(1);
      expect((await store.get("k2"))?.email).toBe("team@x.io");
      expect((await app.handler.quarantined()).map((kept) => kept.uuid)).toEqual([
        "k0",
        ...Array.from({ length: 18 }, (_, index) => `k${index + 3}`),
      ]);
    });

    it("retries on retryQuarantined() after a conflict resolved outside the directory", async () => {
      const store = await subject.create(unique);
      const app = quarantinedHandler(store);
      await app.create({ uuid: "a", username: "sam" });
      await app.create({ uuid: "b", username: "sam" });
      expect(await app.handler.retryQuarantined()).toEqual({ released: 0, kept: 1 });
      await store.delete("a");
      expect(await app.handler.retryQuarantined()).toEqual({ released: 1, kept: 0 });
      expect(await store.get("b")).toEqual({ uuid: "b", username: "sam" });
      expect(app.changes.at(-1)).toMatchObject({ type: "created", uuid: "b" });
    });

    it("shows a duplicate that never resolves in quarantined(), onQuarantine and stats", async () => {
      const store = await subject.create(unique);
      const app = quarantinedHandler(store);
      await app.create({ uuid: "a", email: "same@x.io" });
      await app.create({ uuid: "b", email: "same@x.io", first_name: "B" });
      for (let index = 0; index < 3; index++) await app.create({ uuid: `other-${index}` });
      expect(await app.handler.quarantined()).toMatchObject([
        { uuid: "b", fields: ["email"], awaits: [{ field: "email", value: "same@x.io" }] },
      ]);
      expect(app.events.map((event) => [event.type, event.pending.uuid])).toEqual([["kept", "b"]]);
      expect(app.handler.stats().quarantine).toEqual({
        kept: 1,
        released: 0,
        discarded: 0,
        waiting: 1,
      });
      expect(await store.get("b")).toBeUndefined();
    });

    it("never shows the password: not in the listing, the log, the hook or the error", async () => {
      const store = await subject.create(unique);
      const app = quarantinedHandler(store);
      await app.create({ uuid: "a", email: "taken@x.io" });
      await app.create({ uuid: "c", email: "taken@x.io", password: secret });
      await app.modify({ uuid: "c", password: `${secret}-2` });
      const listed = await app.handler.quarantined();
      expect(listed).toHaveLength(1);
      expect(JSON.stringify(listed)).not.toContain(secret);
      expect(JSON.stringify(app.lines)).not.toContain(secret);
      expect(app.lines.filter((line) => line.level === "warn")).toHaveLength(2);
      expect(JSON.stringify(app.events)).not.toContain(secret);
      // It is kept, to be applied as sent.
      await app.remove("a");
      expect((await store.get("c"))?.password).toBe(`${secret}-2`);
      expect(JSON.stringify(app.lines)).not.toContain(secret);
    });

    it("without the option answers 503 for ever, and says once which uuid and field", async () => {
      const store = await subject.create(unique);
      const { logger, lines } = recordingLogger();
      const handler = createProvisioningHandler({ store, logger });
      await call(handler, "POST", "/v1/user/create", { uuid: "a", email: "taken@x.io" });
      const user = { uuid: "c", email: "Taken@x.io", password: secret };
      for (let round = 0; round < 3; round++) {
        expect((await call(handler, "POST", "/v1/user/create", user)).status).toBe(503);
      }
      const hints = lines.filter((line) => line.level === "warn");
      expect(hints).toHaveLength(1);
      expect(hints[0]?.message).toMatch(/"c".*email.*quarantine/);
      expect(lines.filter((line) => line.level === "error")).toHaveLength(3);
      expect(JSON.stringify(lines)).not.toContain(secret);
      expect(await handler.quarantined()).toEqual([]);
    });
  });

  describe(`${name}: onDelete "deactivate"`, () => {
    // Catches: a delete that removes the row, a list that shows deactivated users, a deactivated
    // user still holding its email, a create that does not reactivate, and one that merges onto
    // the deactivated row (the old username and memberOf coming back, onChange saying updated).
    it("keeps the row, hides it from list and count, frees its values, and re-creates it afresh", async () => {
      const store = await subject.create({ unique: ["email"], onDelete: "deactivate" });
      const app = quarantinedHandler(store);
      await app.create({ uuid: "a", username: "ann", email: "ann@x.io", memberOf: "cn=admins" });
      await app.create({ uuid: "b", username: "bob" });
      expect((await app.remove("a")).status).toBe(204);
      expect((await app.remove("a")).status).toBe(204);
      expect((await app.remove("never-seen")).status).toBe(204);
      const deactivated = await store.get("a");
      expect(deactivated).toMatchObject({
        uuid: "a",
        username: "ann",
        email: "ann@x.io",
        extra: { memberOf: "cn=admins" },
      });
      expect(Date.parse(deactivated?.deactivatedAt ?? "")).not.toBeNaN();
      expect((await store.list()).map((user) => user.uuid)).toEqual(["b"]);
      expect(
        (await store.list({ includeDeactivated: true })).map((user) => user.uuid).sort(),
      ).toEqual(["a", "b"]);
      expect([await store.count(), await store.count({ includeDeactivated: true })]).toEqual([
        1, 2,
      ]);
      // The deactivated user holds no email: another takes it at once.
      expect((await app.modify({ uuid: "b", email: "ANN@x.io" })).status).toBe(204);
      expect(await app.handler.quarantined()).toEqual([]);
      // The directory brings a back with a new email: the user it sends now, and nothing of the
      // deleted one (its username, its memberOf), reported as created.
      expect(
        (await app.create({ uuid: "a", first_name: "Ann", email: "ann.new@x.io" })).status,
      ).toBe(201);
      const again = { uuid: "a", firstName: "Ann", email: "ann.new@x.io" };
      expect(await store.get("a")).toEqual(again);
      expect(app.changes.at(-1)).toEqual({ type: "created", uuid: "a", user: again });
      expect(await store.count()).toBe(2);
      // A modify of a deactivated user creates it from what the modify carries.
      expect((await app.remove("a")).status).toBe(204);
      expect((await app.modify({ uuid: "a", username: "ann2" })).status).toBe(204);
      expect(await store.get("a")).toEqual({ uuid: "a", username: "ann2" });
      expect(app.changes.at(-1)).toMatchObject({ type: "created", uuid: "a" });
      // Re-created with the email b took meanwhile, it is refused and stays deactivated: a
      // deactivated user's old values never block, nor come back.
      expect((await app.remove("a")).status).toBe(204);
      expect((await app.create({ uuid: "a", email: "ann@x.io" })).status).toBe(201);
      expect((await app.handler.quarantined()).map((entry) => entry.uuid)).toEqual(["a"]);
      expect((await store.get("b"))?.email).toBe("ANN@x.io");
    });
  });
}
