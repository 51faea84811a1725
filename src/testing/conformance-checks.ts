import type { UserRecord } from "../users/user-record.ts";
import { fullSync } from "./conformance-full-sync.ts";
import {
  type Check,
  create,
  describeAnswer,
  modify,
  remove,
  testPrefix,
} from "./conformance-session.ts";

/**
 * A user's own mark: the last 12 hex digits of the random uuid in its uuid (`conformance-<random
 * uuid>[-text]`, made by the session). Every username and email a check sends carries the mark of
 * the user it is for, so that no two users share one, in a run or across runs (a user left behind
 * by an interrupted run included): an application that holds usernames or emails unique passes
 * every default check without the quarantine. Only the opt-in conflict check shares a value.
 */
const mark = (uuid: string) => uuid.slice(testPrefix.length + 25, testPrefix.length + 37);
const name = (text: string, uuid: string) => `${testPrefix}-${text}-${mark(uuid)}`;
const email = (local: string, uuid: string) =>
  `${testPrefix}-${local}-${mark(uuid)}@example.invalid`;
const fullUser = (uuid: string) => ({
  uuid,
  user_id: "4711",
  username: name("jdoe", uuid),
  first_name: "Jane",
  last_name: "Doe",
  full_name: "Jane Doe",
  password_format: "plain",
  password: "conformance-password",
  email: email("jdoe", uuid),
});
const fullRecord = (uuid: string): UserRecord => ({
  uuid,
  userId: "4711",
  username: name("jdoe", uuid),
  firstName: "Jane",
  lastName: "Doe",
  fullName: "Jane Doe",
  passwordFormat: "plain",
  password: "conformance-password",
  email: email("jdoe", uuid),
});

const reservedCharacters = [
  ["?", "question mark"],
  ["#", "hash"],
  ["%", "percent sign"],
  [" ", "space"],
  ["+", "plus sign"],
] as const;

/** The SDK's own advice, not the spec's: why a uuid with "/" is only a warning. */
export const slashAdvice =
  'SDK advice: decode the uuid after routing, as one path segment. The spec does not promise that a "/" round-trips through a path, and real directories do not make one, so this is a warning, not a failure.';

export const checks: Check[] = [
  {
    name: "ping answers 204",
    rule: "spec 4.1 rule 1",
    effects: false,
    run: async (s) => void (await s.call("ping", { method: "GET", path: "/v1/ping" }, 204)),
  },
  {
    name: "create answers 201",
    rule: "spec 4.1 rule 2",
    effects: true,
    async run(s) {
      const uuid = s.uuid();
      await s.call("create", create(fullUser(uuid)), 201);
      await s.stored([fullRecord(uuid)]);
    },
  },
  {
    name: "create with only a uuid answers 201",
    rule: "spec 2.1 rule 1",
    effects: true,
    async run(s) {
      const uuid = s.uuid();
      await s.call("create", create({ uuid }), 201);
      await s.stored([{ uuid }]);
    },
  },
  {
    name: "duplicate create answers 201 and updates",
    rule: "spec 4.1 rule 2, 7 rule 2",
    effects: true,
    async run(s) {
      const uuid = s.uuid();
      await s.call("create", create(fullUser(uuid)), "2xx");
      const changed = { ...fullUser(uuid), username: name("jane", uuid) };
      await s.call("create again, changed", create(changed), 201);
      await s.stored([{ ...fullRecord(uuid), username: name("jane", uuid) }]);
    },
  },
  {
    name: "redelivered create answers 201",
    rule: "at-least-once delivery (cookie)",
    effects: true,
    async run(s) {
      const uuid = s.uuid();
      await s.call("create", create(fullUser(uuid)), "2xx");
      await s.call("same create again", create(fullUser(uuid)), 201);
      await s.stored([fullRecord(uuid)]);
    },
  },
  {
    name: "modify answers 204 and updates",
    rule: "spec 4.1 rule 3",
    effects: true,
    async run(s) {
      const uuid = s.uuid();
      await s.call("create", create(fullUser(uuid)), "2xx");
      const changes = { last_name: "Roe", full_name: "Jane Roe", email: email("jroe", uuid) };
      await s.call("modify", modify({ uuid, ...changes }), 204);
      await s.stored([
        { ...fullRecord(uuid), lastName: "Roe", fullName: "Jane Roe", email: email("jroe", uuid) },
      ]);
    },
  },
  {
    name: "partial modify (uuid and one field) keeps the other fields",
    rule: "spec 2.1 rule 2",
    effects: true,
    async run(s) {
      const uuid = s.uuid();
      await s.call("create", create(fullUser(uuid)), "2xx");
      await s.call("modify email only", modify({ uuid, email: email("janed", uuid) }), 204);
      await s.stored([{ ...fullRecord(uuid), email: email("janed", uuid) }]);
    },
  },
  {
    name: "modify of a missing user answers 204 and creates it",
    rule: "spec 4.1 rule 3, 7 rule 2",
    effects: true,
    async run(s) {
      const uuid = s.uuid();
      await s.call("modify unknown uuid", modify({ uuid, username: name("late", uuid) }), 204);
      await s.stored([{ uuid, username: name("late", uuid) }]);
    },
  },
  {
    name: "redelivered modify answers 204",
    rule: "at-least-once delivery (cookie)",
    effects: true,
    async run(s) {
      const uuid = s.uuid();
      await s.call("create", create(fullUser(uuid)), "2xx");
      await s.call("modify", modify({ uuid, first_name: "Janet" }), "2xx");
      await s.call("same modify again", modify({ uuid, first_name: "Janet" }), 204);
      await s.stored([{ ...fullRecord(uuid), firstName: "Janet" }]);
    },
  },
  {
    name: "delete answers 204 and the user is deleted",
    rule: "spec 4.1 rule 4",
    effects: true,
    async run(s) {
      const uuid = s.uuid();
      const other = s.uuid();
      await s.call("create", create(fullUser(uuid)), "2xx");
      await s.call(
        "create another",
        create({ ...fullUser(other), username: name("other", other) }),
        "2xx",
      );
      await s.call("delete", remove(uuid), 204);
      await s.stored([{ ...fullRecord(other), username: name("other", other) }], [uuid]);
    },
  },
  {
    name: "delete of a missing user answers 204",
    rule: "spec 4.1 rule 4, 7 rule 2",
    effects: false,
    run: async (s) => void (await s.call("delete unknown uuid", remove(s.uuid()), 204)),
  },
  {
    name: "redelivered delete answers 204",
    rule: "at-least-once delivery (cookie)",
    effects: true,
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
    effects: true,
    async run(s) {
      const uuid = s.uuid();
      const unknown = { department: "R&D", groups: ["a", "b"], manager: { dn: "cn=x" }, level: 3 };
      const username = name("unknown-fields", uuid);
      await s.call("create with unknown fields", create({ uuid, username, ...unknown }), 201);
      const changed = modify({ uuid, email: email("unknown-fields", uuid), ...unknown });
      await s.call("modify with unknown fields", changed, 204);
      await s.stored([{ uuid, username, email: email("unknown-fields", uuid) }]);
    },
  },
  ...reservedCharacters.map(
    ([character, description]): Check => ({
      name: `uuid with a ${description} (${JSON.stringify(character)}) is deleted`,
      rule: "spec 4.1 rule 4 (the uuid is one percent-encoded path segment)",
      effects: true,
      async run(s) {
        const uuid = s.uuid(`a${character}b`);
        await s.call("create", create({ uuid, username: name("reserved", uuid) }), 201);
        await s.stored([{ uuid, username: name("reserved", uuid) }]);
        await s.call(`delete …${encodeURIComponent(`a${character}b`)}`, remove(uuid), 204);
        await s.stored([], [uuid]);
      },
    }),
  ),
  {
    name: 'uuid with a slash ("/") is deleted',
    rule: "SDK advice, not the spec",
    effects: true,
    async run(s) {
      const uuid = s.uuid("a/b");
      await s.call("create", create({ uuid, username: name("slash", uuid) }), 201);
      await s.stored([{ uuid, username: name("slash", uuid) }]);
      const label = "delete …a%2Fb";
      const answer = await s.call(label, remove(uuid), "any");
      const status = answer.status;
      // A server error or no answer is a failure whatever the advice; a 4xx only misses it.
      if (status === undefined || status >= 500 || (status >= 200 && status < 300)) {
        s.step(`${label}: 204`, `${label}: ${describeAnswer(answer)}`, status === 204);
        await s.stored([], [uuid]);
        return;
      }
      s.warn(`${label}: 204`, `${label}: ${describeAnswer(answer)}`, slashAdvice);
    },
  },
  {
    name: "non-ASCII data is kept intact",
    rule: "spec 2.1 (JSON text is Unicode)",
    effects: true,
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
    effects: false,
    async run(s) {
      const body = `{"uuid":"${s.uuid()}","username":`;
      await s.call("create with invalid JSON", { ...create({}), body }, "not 2xx");
      await s.call("modify with invalid JSON", { ...modify({}), body }, "not 2xx");
    },
  },
  {
    name: "a record without uuid is not answered 2xx",
    rule: "spec 2.1 rule 1 (uuid is required)",
    effects: false,
    async run(s) {
      // Sent without a uuid, so not the session's: nothing to delete after the check.
      const nobody = `${testPrefix}-${crypto.randomUUID()}`;
      const [username, mail] = [name("nobody", nobody), email("nobody", nobody)];
      await s.call("create without uuid", create({ username }), "not 2xx");
      await s.call("modify without uuid", modify({ email: mail }), "not 2xx");
    },
  },
  {
    name: "a full sync with changes completes",
    rule: "spec 1.4-1.6, 4.1",
    effects: true,
    run: fullSync,
  },
];
