// The delete guard explored (fast-check `fc.commands`): the real sync, over a directory in memory,
// into the reference Provisioning API served over loopback HTTP, through random sequences of
// directory shrinkages and growths, filter changes (to none, to half), full re-syncs with and
// without POST /v1/reset, allowances (a count, or every user), restarts on the same state file,
// a clock that moves (minutes to days), and a 503 that stops a cycle part-way through its deletes.
// Invariants, checked on the application's own store after every cycle:
// - without an allowance, no cycle and no rolling window (24 h) deletes past the thresholds;
// - an allowance covers exactly one cycle (the first the guard would stop) and at most its count;
// - every user is deleted at once only under allowDeleteAll;
// - the report's `deleted` is what the application lost; a stopped cycle sends nothing;
// - a completed cycle leaves the application holding exactly the directory's users.
// Bounded and seeded in `npm test`; longer under `npm run explore`.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import {
  createDirectorySync,
  type DirectoryPage,
  type DirectorySource,
  type DirectorySync,
  type DirectorySyncReport,
} from "../../src/ldap/index.ts";
import type { UserRecord } from "../../src/provisioning/index.ts";
import { exploration } from "../support/exploration.ts";
import {
  createReferenceProvisioning,
  type ReferenceProvisioning,
} from "../support/reference-provisioning.ts";
import { type RunningServer, serveFetchHandler } from "../support/serve-fetch-handler.ts";

const explore = exploration("delete guard", { numRuns: 20, maxCommands: 40 });
const hour = 60 * 60_000;
const windowMs = 24 * hour;
const percentFloor = 20;

type Filter = "all" | "none" | "even";
type Allowance = { kind: "count"; deletes: number } | { kind: "all" };

/** What the model knows, apart from the implementation. */
interface Model {
  /** The guard's thresholds in this run. */
  maxDeletes: number;
  maxPercent: number;
  /** The allowance of the sync now open, until a cycle the guard would stop spends it. */
  allowance: Allowance | undefined;
  /** The deletes of cycles no allowance covered: [time, count]. */
  window: [number, number][];
  /**
   * The users an allowance let a cycle delete that a failure left undeleted: a later cycle of the
   * same sync whose deletes are all among them goes through (every user only under "all").
   */
  remaining: { uuids: Set<string>; all: boolean } | undefined;
}

interface Real {
  folder: string;
  app: ReferenceProvisioning;
  server: RunningServer;
  sync: DirectorySync;
  clock: number;
  people: UserRecord[];
  /** The people shrinks removed, which a restore brings back. */
  removed: UserRecord[];
  next: number;
  filter: Filter;
  /**
   * Users the uuid read returns and the read that creates leaves out, as Active Directory's
   * disabled accounts kept by default ("keep") and its entries without a username.
   */
  kept: Set<string>;
  resetRequest: boolean;
  /** A full re-sync asked for and not yet started. */
  resyncPending: boolean;
  /** The DELETE (counted in this cycle) answered 503, or undefined for none. */
  failDeleteAt: number | undefined;
  deletesThisCycle: number;
  steps: string[];
}

const person = (index: number): UserRecord => ({ uuid: `u${index}`, username: `user${index}` });

function directoryOf(real: Real): DirectorySource {
  return {
    identity: "model directory",
    async *read({ uuidsOnly }): AsyncGenerator<DirectoryPage> {
      const users = visible(real);
      for (let index = 0; index < users.length; index += 7) {
        const page = users.slice(index, index + 7);
        if (uuidsOnly) yield { users: page.map(({ uuid }) => ({ uuid })), skipped: [] };
        else {
          yield {
            users: page.filter((user) => !real.kept.has(user.uuid)),
            skipped: page
              .filter((user) => real.kept.has(user.uuid))
              .map((user) => ({ dn: `cn=${user.uuid}`, reason: "it has no username" })),
          };
        }
      }
    },
  };
}

function visible(real: Real): UserRecord[] {
  if (real.filter === "none") return [];
  if (real.filter === "even") {
    return real.people.filter((user) => Number(user.uuid.slice(1)) % 2 === 0);
  }
  return [...real.people];
}

function open(real: Real, model: Model, allowance?: Allowance): void {
  real.sync = createDirectorySync({
    source: directoryOf(real),
    target: real.server.url,
    state: join(real.folder, "state.sqlite"),
    deleteGuard: { maxDeletes: model.maxDeletes, maxPercent: model.maxPercent },
    ...(real.resetRequest && { resetRequest: true }),
    ...(allowance?.kind === "count" && { allowDeletes: allowance.deletes }),
    ...(allowance?.kind === "all" && { allowDeleteAll: true }),
    now: () => real.clock,
  });
  model.allowance = allowance;
  model.remaining = undefined;
}

async function held(real: Real): Promise<Set<string>> {
  return new Set((await real.app.store.list()).map((user) => user.uuid));
}

/** Runs one cycle and checks every invariant against what the application holds. */
async function cycle(model: Model, real: Real): Promise<DirectorySyncReport> {
  const before = await held(real);
  real.deletesThisCycle = 0;
  const report = await real.sync.syncOnce();
  real.failDeleteAt = undefined;
  const after = await held(real);
  const lost = [...before].filter((uuid) => !after.has(uuid)).length;
  const at = real.clock;
  model.window = model.window.filter(([time]) => at - time < windowMs);
  const inWindow = model.window.reduce((sum, [, count]) => sum + count, 0);
  const context = `${real.steps.join(" / ")} → ${JSON.stringify({ ...report, durationMs: 0 })}`;

  // The model's own verdict: the acknowledged users the directory no longer returns, judged on
  // the cycle and on the window (the users held before the window's deletes as the base).
  // A reset is judged on the read that creates (the kept left out), other cycles on the uuid read.
  const reset = real.resyncPending && real.resetRequest;
  const shown = new Set(
    visible(real)
      .map((user) => user.uuid)
      .filter((uuid) => !(reset && real.kept.has(uuid))),
  );
  const planned = [...before].filter((uuid) => !shown.has(uuid)).length;
  const over = (deletes: number, base: number) =>
    deletes > model.maxDeletes ||
    (deletes >= percentFloor && deletes * 100 > base * model.maxPercent);
  // A reset from a state that holds nobody may remove every user the application holds.
  const blind = reset && before.size === 0;
  const stops =
    blind ||
    (planned > 0 &&
      (planned >= before.size ||
        over(planned, before.size) ||
        (inWindow > 0 && over(inWindow + planned, before.size + inWindow))));
  const plannedUuids = [...before].filter((uuid) => !shown.has(uuid));
  const all = blind || planned >= before.size;
  const carried =
    stops &&
    model.remaining !== undefined &&
    (model.remaining.all || !all) &&
    !blind &&
    plannedUuids.every((uuid) => model.remaining?.uuids.has(uuid));
  const covers =
    carried ||
    (stops &&
      model.allowance !== undefined &&
      (all
        ? model.allowance.kind === "all"
        : model.allowance.kind === "all" || planned <= model.allowance.deletes));
  expect(report.deleteGuard !== undefined, `${context}: stopped?`).toBe(stops && !covers);
  expect(report.allowed, `${context}: allowed`).toBe(covers ? planned : undefined);
  // A full re-sync stays asked for until the guard lets it through and it has sent its deletes
  // or its reset.
  if (report.mode === "full" && !report.deleteGuard && (report.completed || lost === planned)) {
    real.resyncPending = false;
  }

  // The report says what was deleted.
  expect(report.deleted, context).toBe(lost);
  // A cycle the guard stopped sent nothing.
  if (report.deleteGuard) expect([...after].sort(), context).toEqual([...before].sort());
  const lostAll = before.size > 0 && lost === before.size;
  if (carried) {
    // The rest of an allowed clean-up, those users only.
    expect(lostAll && !model.remaining?.all, context).toBe(false);
    const remaining = model.remaining as { uuids: Set<string>; all: boolean };
    for (const uuid of before) if (!after.has(uuid)) remaining.uuids.delete(uuid);
    if (remaining.uuids.size === 0 || real.resetRequest) model.remaining = undefined;
  } else if (report.allowed !== undefined) {
    // Only an allowance the model holds, once, and at most its count (every user only by its own).
    expect(model.allowance, context).toBeDefined();
    if (model.allowance?.kind === "count") {
      expect(lost, context).toBeLessThanOrEqual(model.allowance.deletes);
      expect(lostAll, context).toBe(false);
    }
    const left = new Set(plannedUuids.filter((uuid) => after.has(uuid)));
    model.remaining =
      left.size > 0 && !blind ? { uuids: left, all: model.allowance?.kind === "all" } : undefined;
    model.allowance = undefined;
    model.window = [];
  } else {
    expect(lostAll, `${context}: every user deleted without allowDeleteAll`).toBe(false);
    expect(lost, context).toBeLessThanOrEqual(model.maxDeletes);
    if (lost >= percentFloor) {
      expect(lost * 100, context).toBeLessThanOrEqual(before.size * model.maxPercent);
    }
    const total = inWindow + lost;
    expect(total, `${context}: window`).toBeLessThanOrEqual(model.maxDeletes);
    if (total >= percentFloor) {
      expect(total * 100, `${context}: window`).toBeLessThanOrEqual(
        (before.size + inWindow) * model.maxPercent,
      );
    }
    if (lost > 0) model.window.push([at, lost]);
    // The first cycle the guard stops spends the allowance, covered or not.
    if (report.deleteGuard) model.allowance = undefined;
  }
  if (report.completed) {
    // The kept stay as they were held, unless a reset removed them.
    const directory = visible(real)
      .map((user) => user.uuid)
      .filter((uuid) => !real.kept.has(uuid) || (!reset && before.has(uuid)));
    expect([...after].sort(), `${context}: completed`).toEqual([...directory].sort());
  }
  return report;
}

type Command = fc.AsyncCommand<Model, Real>;
const command = (
  name: string,
  run: (model: Model, real: Real) => Promise<void> | void,
): Command => ({
  check: () => true,
  async run(model, real) {
    real.steps.push(name);
    await run(model, real);
  },
  toString: () => name,
});

const commands = fc.commands(
  [
    fc.oneof(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 1, max: 40 })).map((count) =>
      command(`shrink ${count}`, async (model, real) => {
        real.removed.push(...real.people.splice(0, Math.min(count, real.people.length)));
        await cycle(model, real);
      }),
    ),
    fc.constant(
      command("restore half the removed", async (model, real) => {
        real.people.push(...real.removed.splice(0, Math.ceil(real.removed.length / 2)));
        await cycle(model, real);
      }),
    ),
    fc.constant(
      command("restore the removed, filter all", async (model, real) => {
        real.people.push(...real.removed.splice(0));
        real.filter = "all";
        await cycle(model, real);
      }),
    ),
    fc.integer({ min: 1, max: 30 }).map((count) =>
      command(`grow ${count}`, async (model, real) => {
        for (let index = 0; index < count; index++) real.people.push(person(real.next++));
        await cycle(model, real);
      }),
    ),
    fc.constantFrom<Filter>("all", "none", "even").map((filter) =>
      command(`filter ${filter}`, async (model, real) => {
        real.filter = filter;
        await cycle(model, real);
      }),
    ),
    fc.integer({ min: 0, max: 100 }).map((percent) =>
      command(`keep ${percent} % out of the read that creates`, async (model, real) => {
        real.kept = new Set(
          real.people
            .filter((_, index) => index * 100 < real.people.length * percent)
            .map((user) => user.uuid),
        );
        await cycle(model, real);
      }),
    ),
    fc.constant(
      command("full re-sync", async (model, real) => {
        real.sync.requestResync();
        real.resyncPending = true;
        await cycle(model, real);
      }),
    ),
    // The operator's answer to a stop: an allowance of the deletes the cycle would send, fewer,
    // more, a count far above every user, or every user; then the cycle, as a restart runs it.
    fc.constantFrom("exact", "fewer", "more", "thousand", "all").map((size) =>
      command(`restart allowing ${size}, cycle`, async (model, real) => {
        const shown = new Set(visible(real).map((user) => user.uuid));
        const planned = [...(await held(real))].filter((uuid) => !shown.has(uuid)).length;
        const deletes = { exact: planned, fewer: planned - 1, more: planned + 3, thousand: 1000 };
        const allowance: Allowance =
          size === "all" ? { kind: "all" } : { kind: "count", deletes: deletes[size] };
        real.steps.push(`(allowing ${JSON.stringify(allowance)})`);
        await real.sync.close();
        open(
          real,
          model,
          allowance.kind === "count" && allowance.deletes < 1 ? undefined : allowance,
        );
        await cycle(model, real);
      }),
    ),
    fc.boolean().map((resetRequest) =>
      command(`restart${resetRequest ? " with reset" : ""}`, async (model, real) => {
        await real.sync.close();
        real.resetRequest = resetRequest;
        open(real, model);
      }),
    ),
    fc.constantFrom(5 * 60_000, 3 * hour, 12 * hour, 25 * hour).map((ms) =>
      command(`wait ${ms / 60_000} min`, (_model, real) => {
        real.clock += ms;
      }),
    ),
    fc.integer({ min: 1, max: 10 }).map((at) =>
      command(`cycle with a 503 at delete ${at}`, async (model, real) => {
        real.failDeleteAt = at;
        await cycle(model, real);
      }),
    ),
    fc.constant(command("cycle", (model, real) => cycle(model, real).then(() => undefined))),
  ],
  { maxCommands: explore.maxCommands, size: "max" },
);

const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

describe("the delete guard, explored", () => {
  it(
    "never deletes past its thresholds over a cycle or a window without an allowance, spends each allowance once, and reports what it deleted",
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 20, max: 90 }),
          fc.constantFrom(5, 15, 40, 500),
          fc.constantFrom(10, 20, 50),
          fc.boolean(),
          commands,
          async (size, maxDeletes, maxPercent, resetRequest, operations) => {
            const folder = mkdtempSync(join(tmpdir(), "guard-model-"));
            folders.push(folder);
            const app = createReferenceProvisioning();
            const real = {
              folder,
              app,
              clock: Date.UTC(2026, 0, 1),
              people: Array.from({ length: size }, (_, index) => person(index)),
              removed: [],
              next: size,
              filter: "all",
              kept: new Set(),
              resetRequest,
              resyncPending: false,
              failDeleteAt: undefined,
              deletesThisCycle: 0,
              steps: [`${size} users, maxDeletes ${maxDeletes}, maxPercent ${maxPercent}`],
            } as Omit<Real, "server" | "sync"> as Real;
            real.server = await serveFetchHandler(async (request) => {
              if (request.method === "DELETE" && ++real.deletesThisCycle === real.failDeleteAt) {
                return new Response(null, { status: 503 });
              }
              return app.fetch(request);
            });
            const model: Model = {
              maxDeletes,
              maxPercent,
              allowance: undefined,
              window: [],
              remaining: undefined,
            };
            open(real, model);
            try {
              expect(await cycle(model, real)).toMatchObject({ completed: true, created: size });
              await fc.asyncModelRun(() => ({ model, real }), operations);
            } finally {
              await real.sync.close();
              await real.server.close();
            }
          },
        ),
        explore.parameters,
      );
    },
    explore.timeoutMs,
  );
});
