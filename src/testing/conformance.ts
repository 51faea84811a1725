import type { JsonValue } from "type-fest";
import { mergeUser } from "../provisioning/merge-user.ts";
import { type UserRecord, userFieldNames } from "../provisioning/user-record.ts";
import { createPlatformSimulator } from "./platform-simulator.ts";
import {
  connectProvisioning,
  type ProvisioningAnswer,
  type ProvisioningCall,
  type ProvisioningClient,
  type ProvisioningTarget,
} from "./provisioning-target.ts";
import { createUserGenerator } from "./user-generator.ts";

/** How {@link runConformance} calls the application, and how it may look inside it. */
export interface ConformanceOptions {
  /** How long one call may take (default 10 s). */
  timeoutMs?: number;
  /**
   * Reads a user back from the application's store, or undefined when there is none. The API
   * has no read endpoint, so without it the suite judges statuses only; with it, it also checks
   * the effects: a duplicate create updates, a partial modify keeps the other fields, a delete by
   * an encoded uuid removes that user, non-ASCII text survives. Unknown fields are not compared.
   */
  readUser?(uuid: string): UserRecord | undefined | Promise<UserRecord | undefined>;
  signal?: AbortSignal;
}

/** The outcome of one check. */
export interface ConformanceResult {
  name: string;
  /** Where the rule comes from: a section of the spec, or the platform's behaviour. */
  rule: string;
  passed: boolean;
  /** The steps and what each should get, up to the first that failed. */
  expected: string;
  /** What came back at each of those steps. */
  actual: string;
}

/** Every check's result; `passed` when all passed. */
export interface ConformanceReport {
  passed: boolean;
  results: ConformanceResult[];
}

type Want = number | "2xx" | "not 2xx";

interface Session {
  /** A uuid no other run uses (with `text` in it), deleted again after the check. */
  uuid(text?: string): string;
  call(label: string, request: ProvisioningCall, want: Want): Promise<void>;
  /** When readUser is given: reads back the `present` users as sent, and the `gone` ones gone. */
  stored(present: UserRecord[], gone?: string[]): Promise<void>;
  /** A step that the check judges itself. */
  step(expected: string, actual: string, passed: boolean): void;
  target: ProvisioningTarget;
  timeoutMs: number;
  signal?: AbortSignal;
}

interface Check {
  name: string;
  rule: string;
  run(session: Session): Promise<void>;
}

class StepFailed extends Error {}

const create = (body: unknown): ProvisioningCall => ({
  method: "POST",
  path: "/v1/user/create",
  body: JSON.stringify(body),
});
const modify = (body: unknown): ProvisioningCall => ({
  method: "POST",
  path: "/v1/user/modify",
  body: JSON.stringify(body),
});
const remove = (uuid: string): ProvisioningCall => ({
  method: "DELETE",
  path: `/v1/user/${encodeURIComponent(uuid)}`,
});
const fullUser = (uuid: string) => ({
  uuid,
  user_id: "4711",
  username: "jdoe",
  first_name: "Jane",
  last_name: "Doe",
  full_name: "Jane Doe",
  password_format: "plain",
  password: "conformance-password",
  email: "jdoe@conformance.test",
});
const fullRecord = (uuid: string): UserRecord => ({
  uuid,
  userId: "4711",
  username: "jdoe",
  firstName: "Jane",
  lastName: "Doe",
  fullName: "Jane Doe",
  passwordFormat: "plain",
  password: "conformance-password",
  email: "jdoe@conformance.test",
});

const reservedCharacters = [
  ["/", "slash"],
  ["?", "question mark"],
  ["#", "hash"],
  ["%", "percent sign"],
  [" ", "space"],
  ["+", "plus sign"],
] as const;

const checks: Check[] = [
  {
    name: "ping answers 204",
    rule: "spec 4.1 rule 1",
    run: (s) => s.call("ping", { method: "GET", path: "/v1/ping" }, 204),
  },
  {
    name: "create answers 201",
    rule: "spec 4.1 rule 2",
    async run(s) {
      const uuid = s.uuid();
      await s.call("create", create(fullUser(uuid)), 201);
      await s.stored([fullRecord(uuid)]);
    },
  },
  {
    name: "create with only a uuid answers 201",
    rule: "spec 2.1 rule 1",
    async run(s) {
      const uuid = s.uuid();
      await s.call("create", create({ uuid }), 201);
      await s.stored([{ uuid }]);
    },
  },
  {
    name: "duplicate create answers 201 and updates",
    rule: "spec 4.1 rule 2, 7 rule 2",
    async run(s) {
      const uuid = s.uuid();
      await s.call("create", create(fullUser(uuid)), "2xx");
      await s.call("create again, changed", create({ ...fullUser(uuid), username: "jane" }), 201);
      await s.stored([{ ...fullRecord(uuid), username: "jane" }]);
    },
  },
  {
    name: "redelivered create answers 201",
    rule: "at-least-once delivery (cookie)",
    async run(s) {
      const uuid = s.uuid();
      await s.call("create", create(fullUser(uuid)), "2xx");
      await s.call("same create again", create(fullUser(uuid)), 201);
      await s.stored([fullRecord(uuid)]);
    },
  },
  {
    name: "modify answers 204",
    rule: "spec 4.1 rule 3",
    async run(s) {
      const uuid = s.uuid();
      await s.call("create", create(fullUser(uuid)), "2xx");
      const changes = { last_name: "Roe", full_name: "Jane Roe", email: "jroe@conformance.test" };
      await s.call("modify", modify({ uuid, ...changes }), 204);
      await s.stored([
        {
          ...fullRecord(uuid),
          lastName: "Roe",
          fullName: "Jane Roe",
          email: "jroe@conformance.test",
        },
      ]);
    },
  },
  {
    name: "partial modify (uuid and one field) keeps the other fields",
    rule: "spec 2.1 rule 2",
    async run(s) {
      const uuid = s.uuid();
      await s.call("create", create(fullUser(uuid)), "2xx");
      await s.call("modify password only", modify({ uuid, password: "rotated" }), 204);
      await s.stored([{ ...fullRecord(uuid), password: "rotated" }]);
    },
  },
  {
    name: "modify of a missing user answers 204",
    rule: "spec 4.1 rule 3, 7 rule 2",
    async run(s) {
      const uuid = s.uuid();
      await s.call("modify unknown uuid", modify({ uuid, username: "late" }), 204);
      await s.stored([{ uuid, username: "late" }]);
    },
  },
  {
    name: "redelivered modify answers 204",
    rule: "at-least-once delivery (cookie)",
    async run(s) {
      const uuid = s.uuid();
      await s.call("create", create(fullUser(uuid)), "2xx");
      await s.call("modify", modify({ uuid, first_name: "Janet" }), "2xx");
      await s.call("same modify again", modify({ uuid, first_name: "Janet" }), 204);
      await s.stored([{ ...fullRecord(uuid), firstName: "Janet" }]);
    },
  },
  {
    name: "delete answers 204",
    rule: "spec 4.1 rule 4",
    async run(s) {
      const uuid = s.uuid();
      await s.call("create", create(fullUser(uuid)), "2xx");
      await s.call("delete", remove(uuid), 204);
      await s.stored([], [uuid]);
    },
  },
  {
    name: "delete of a missing user answers 204",
    rule: "spec 4.1 rule 4, 7 rule 2",
    run: (s) => s.call("delete unknown uuid", remove(s.uuid()), 204),
  },
  {
    name: "redelivered delete answers 204",
    rule: "at-least-once delivery (cookie)",
    async run(s) {
      const uuid = s.uuid();
      await s.call("create", create(fullUser(uuid)), "2xx");
      await s.call("delete", remove(uuid), "2xx");
      await s.call("same delete again", remove(uuid), 204);
      await s.stored([], [uuid]);
    },
  },
  {
    name: "unknown fields are accepted",
    rule: "spec 7 rule 1 (a refusal stalls the sync)",
    async run(s) {
      const uuid = s.uuid();
      const unknown = { department: "R&D", groups: ["a", "b"], manager: { dn: "cn=x" }, level: 3 };
      await s.call("create with unknown fields", create({ uuid, username: "u", ...unknown }), 201);
      await s.call(
        "modify with unknown fields",
        modify({ uuid, email: "u@x.test", ...unknown }),
        204,
      );
      await s.stored([{ uuid, username: "u", email: "u@x.test" }]);
    },
  },
  ...reservedCharacters.map(
    ([character, description]): Check => ({
      name: `uuid with a ${description} (${JSON.stringify(character)}) is deleted`,
      rule: "spec 4.1 rule 4 (the uuid is one percent-encoded path segment)",
      async run(s) {
        const uuid = s.uuid(`a${character}b`);
        await s.call("create", create({ uuid, username: "reserved" }), 201);
        await s.stored([{ uuid, username: "reserved" }]);
        await s.call(`delete …${encodeURIComponent(`a${character}b`)}`, remove(uuid), 204);
        await s.stored([], [uuid]);
      },
    }),
  ),
  {
    name: "non-ASCII data is kept intact",
    rule: "spec 2.1 (JSON text is Unicode)",
    async run(s) {
      const uuid = s.uuid("Ærøskøbing-渡辺-😀");
      const names = { first_name: "Zoë", last_name: "Ångström-Núñez", full_name: "Zoë 渡辺 😀" };
      await s.call("create", create({ uuid, ...names }), 201);
      await s.call("modify", modify({ uuid, last_name: "Παπαδοπούλου" }), 204);
      await s.stored([
        { uuid, firstName: "Zoë", lastName: "Παπαδοπούλου", fullName: "Zoë 渡辺 😀" },
      ]);
      await s.call("delete", remove(uuid), 204);
      await s.stored([], [uuid]);
    },
  },
  {
    name: "invalid JSON is not answered 2xx",
    rule: "no silent loss (spec 7 rule 1: the sync pauses and retries)",
    async run(s) {
      const body = `{"uuid":"${s.uuid()}","username":`;
      await s.call("create with invalid JSON", { ...create({}), body }, "not 2xx");
      await s.call("modify with invalid JSON", { ...modify({}), body }, "not 2xx");
    },
  },
  {
    name: "a record without uuid is not answered 2xx",
    rule: "spec 2.1 rule 1 (uuid is required)",
    async run(s) {
      await s.call("create without uuid", create({ username: "nobody" }), "not 2xx");
      await s.call("modify without uuid", modify({ email: "nobody@x.test" }), "not 2xx");
    },
  },
  { name: "a full sync with changes completes", rule: "spec 1.4-1.6, 4.1", run: fullSync },
];

/**
 * The platform's whole cycle through {@link createPlatformSimulator}: the initial sync of a
 * generated directory, then a round of changes with a lost answer and a duplicate delivery on
 * the way, then the removal of every user (which also cleans up).
 */
async function fullSync(s: Session): Promise<void> {
  const seed = crypto.getRandomValues(new Uint32Array(1))[0] ?? 0;
  const generator = createUserGenerator({ seed });
  const platform = createPlatformSimulator({ target: s.target, timeoutMs: s.timeoutMs });
  const syncOptions = s.signal ? { signal: s.signal } : {};
  /** One cycle, and `retries` more while it does not complete, as the platform's next cycles. */
  const cycle = async (expected: string, retries: number) => {
    let report = await platform.sync(syncOptions);
    for (let retry = 0; retry < retries && !report.completed; retry++) {
      report = await platform.sync(syncOptions);
    }
    const stop = report.stoppedAt;
    const where = stop && [stop.message.kind, stop.message.uuid].filter(Boolean).join(" ");
    const actual = stop
      ? `stopped at ${where} (attempt ${stop.attempt}): ${stop.error ?? `${stop.status} ${short(stop.body)}`}`
      : expected;
    s.step(expected, actual, report.completed);
  };
  try {
    for (const user of generator.users(20)) platform.addUser(user);
    await cycle("initial sync of 20 users completes", 0);
    const changes = generator.changes(13);
    for (const change of changes) platform.apply(change);
    // At least one modify and one delete, whatever the seed drew, for the faults to hit.
    const [changed, leaving] = platform.users();
    if (changed && leaving) {
      platform.changeUser({ uuid: changed.uuid, email: `moved-${seed}@conformance.test` });
      platform.removeUser(leaving.uuid);
      changes.push({ type: "remove", uuid: leaving.uuid });
    }
    platform.injectFault({ type: "drop-response", on: "modify" });
    platform.injectFault({ type: "duplicate", on: "delete" });
    await cycle("15 changes complete after a lost answer and a duplicate", 1);
    const present = platform.users();
    const kept = new Set(present.map((user) => user.uuid));
    const removed = changes.flatMap((change) =>
      change.type === "remove" && !kept.has(change.uuid) ? [change.uuid] : [],
    );
    await s.stored(present, removed);
  } finally {
    for (const { uuid } of platform.users()) platform.removeUser(uuid);
    await platform.sync(syncOptions);
  }
}

/**
 * Checks a Provisioning API implementation, in any language, from the outside: every rule of
 * spec sections 4.1 and 7 (statuses, duplicate create, modify of a missing user, delete of a
 * missing user), idempotent redelivery, partial modify, unknown fields, uuids with reserved URL
 * characters, non-ASCII data, refusal of bad input, and a full simulated sync with changes.
 *
 * Checks run one after the other with fresh random uuids (prefixed `conformance-`) and delete
 * what they created, so the suite can run against a live application. It never rejects: each
 * check's outcome is in the report. When `signal` aborts, it stops after the check under way,
 * and the report holds the results so far (and does not pass). The CLI runs it as `platform-integration conformance <url>`.
 *
 * @example
 * ```ts
 * const report = await runConformance("http://127.0.0.1:3000", {
 *   readUser: (uuid) => store.get(uuid),
 * });
 * expect(report.results.filter((result) => !result.passed)).toEqual([]);
 * ```
 */
export async function runConformance(
  target: ProvisioningTarget,
  options: ConformanceOptions = {},
): Promise<ConformanceReport> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const send = connectProvisioning(target, { timeoutMs });
  const results: ConformanceResult[] = [];
  for (const check of checks) {
    if (options.signal?.aborted) break;
    results.push(await runCheck(check, send, target, timeoutMs, options));
  }
  const passed = results.length === checks.length && results.every((result) => result.passed);
  return { passed, results };
}

async function runCheck(
  check: Check,
  send: ProvisioningClient,
  target: ProvisioningTarget,
  timeoutMs: number,
  { readUser, signal }: ConformanceOptions,
): Promise<ConformanceResult> {
  const expected: string[] = [];
  const actual: string[] = [];
  const used = new Set<string>();
  const step = (want: string, got: string, passed: boolean) => {
    expected.push(want);
    actual.push(got);
    if (!passed) throw new StepFailed();
  };
  const session: Session = {
    target,
    timeoutMs,
    ...(signal && { signal }),
    step,
    uuid: (text) => {
      const uuid = `conformance-${crypto.randomUUID()}${text === undefined ? "" : `-${text}`}`;
      used.add(uuid);
      return uuid;
    },
    async call(label, request, want) {
      const answer = await send(request, signal);
      step(`${label}: ${want}`, `${label}: ${describeAnswer(answer)}`, matches(answer, want));
    },
    async stored(present, gone = []) {
      if (!readUser) return;
      const label = present.length > 0 ? "read back" : "read back after delete";
      const single = present.length + gone.length === 1;
      const want = single
        ? `${label}: ${present.length > 0 ? "as sent" : "gone"}`
        : `${label}: ${present.length} as sent, ${gone.length} gone`;
      for (const [uuid, user] of [
        ...present.map((user) => [user.uuid, user] as const),
        ...gone.map((uuid) => [uuid, undefined] as const),
      ]) {
        const difference = compareUsers(user, await readUser(uuid));
        if (difference) step(want, `${label}: ${single ? "" : `${uuid} `}${difference}`, false);
      }
      step(want, want, true);
    },
  };
  let passed = true;
  try {
    await check.run(session);
  } catch (error) {
    if (!(error instanceof StepFailed)) {
      expected.push("no exception");
      actual.push(`threw ${error instanceof Error ? error.message : String(error)}`);
    }
    passed = false;
  } finally {
    // Best effort, so that runs against a live application leave nothing behind.
    for (const uuid of used) await send(remove(uuid), signal);
  }
  return {
    name: check.name,
    rule: check.rule,
    passed,
    expected: expected.join("; "),
    actual: actual.join("; "),
  };
}

function matches(answer: ProvisioningAnswer, want: Want): boolean {
  if (answer.status === undefined) return false;
  const success = answer.status >= 200 && answer.status < 300;
  if (want === "2xx") return success;
  if (want === "not 2xx") return !success;
  return answer.status === want;
}

function describeAnswer(answer: ProvisioningAnswer): string {
  if (answer.status === undefined) return `no answer (${answer.error})`;
  return answer.body === undefined
    ? String(answer.status)
    : `${answer.status} ${short(answer.body)}`;
}

function short(body: JsonValue | undefined): string {
  const text = typeof body === "string" ? body : JSON.stringify(body ?? "");
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

/** The first documented field that differs, described, or undefined when they agree. */
function compareUsers(
  want: UserRecord | undefined,
  got: UserRecord | undefined,
): string | undefined {
  if (!want || !got) return want === got ? undefined : want ? "missing" : "still stored";
  const [expected, stored] = [mergeUser(undefined, want), mergeUser(undefined, got)];
  for (const field of ["uuid", ...userFieldNames] as const) {
    if (expected[field] !== stored[field]) {
      return `${field} ${JSON.stringify(stored[field]) ?? "absent"} instead of ${JSON.stringify(expected[field]) ?? "absent"}`;
    }
  }
  return undefined;
}
