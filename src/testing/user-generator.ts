import type { UserRecord } from "../users/user-record.ts";
import type { DirectoryChange } from "./platform-simulator.ts";

/** Where {@link createUserGenerator} starts from: the same seed gives the same users. */
export interface UserGeneratorOptions {
  /** Any number or string (default 1). */
  seed?: number | string;
  /**
   * Marks every user as a test user that an application's hooks (welcome mails, audit) can tell
   * apart: uuids and usernames start with `${testPrefix}-`, emails are at `example.invalid`,
   * a domain that never receives mail (RFC 2606). The CLI's commands set it.
   */
  testPrefix?: string;
}

/** Makes a realistic directory and changes to it: see {@link createUserGenerator}. */
export interface UserGenerator {
  /** A new user with every documented field set. */
  user(): UserRecord;
  /** `count` new users. */
  users(count: number): UserRecord[];
  /**
   * A round of `count` changes to the users generated so far and not yet removed: about 60 %
   * changes of one user (email, password, or surname with username and email), 20 % removals, 20 % new users.
   */
  changes(count: number): DirectoryChange[];
}

// Latin names, a good share with diacritics; whole names in other scripts are drawn separately.
const firstNames =
  "James Mary John Patricia Robert Jennifer Michael Linda David Elizabeth William Susan Richard Sarah Daniel Karen Aisha Wei Priya Kenji Fatima Omar Olga Ivan Lucas Emma Zoë José Chloé Björn Søren Łukasz Åsa Ümit François Zoltán Siobhán Małgorzata Jürgen Renée Noémie".split(
    " ",
  );
const lastNames = [
  ..."Smith Johnson Williams Brown Jones Garcia Miller Davis Martinez Lopez Wilson Anderson Taylor Moore Jackson Martin Lee Thompson White Harris Clark Lewis Walker Young King Wright Patel Nguyen Kim Chen Singh Khan Müller Núñez Ångström Østergaard Kowalczyk Dvořák Gómez Lefèvre Şahin Nakamura O'Brien".split(
    " ",
  ),
  "van der Berg",
  "Ní Bhriain",
];
const otherScripts: [first: string, last: string][] = [
  ["Анна", "Иванова"],
  ["Νίκος", "Παπαδόπουλος"],
  ["健", "渡辺"],
  ["美玲", "陈"],
  ["أحمد", "حسن"],
  ["דנה", "כהן"],
];
const realisticDomains = ["acme.test", "corp.acme.test", "example.com"];
const testDomains = ["example.invalid", "mail.example.invalid", "corp.example.invalid"];

/**
 * A deterministic generator of directory users (names from several languages, some outside ASCII
 * and outside the Latin script; unique usernames and emails; a salted hash as the password) and
 * of rounds of changes to them: to feed {@link createPlatformSimulator} a directory that looks
 * like a real one, reproducibly, with no dependency.
 *
 * @example
 * ```ts
 * const generator = createUserGenerator({ seed: 42 });
 * const platform = createPlatformSimulator({ target: app });
 * for (const user of generator.users(1000)) platform.addUser(user);
 * await platform.sync();
 * for (const change of generator.changes(50)) platform.apply(change);
 * await platform.sync();
 * ```
 */
export function createUserGenerator({
  seed = 1,
  testPrefix,
}: UserGeneratorOptions = {}): UserGenerator {
  const mark = testPrefix === undefined ? "" : `${testPrefix}-`;
  const domains = testPrefix === undefined ? realisticDomains : testDomains;
  const random = mulberry32(typeof seed === "number" ? seed >>> 0 : fnv1a(seed));
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const hex = (length: number) =>
    Array.from({ length }, () => Math.floor(random() * 16).toString(16)).join("");
  const usernames = new Set<string>();
  // Users not yet removed, with their position in `live` for O(1) picks and removals.
  const live: UserRecord[] = [];
  const position = new Map<string, number>();
  let serial = 1000;

  const uniqueUsername = (first: string, last: string) => {
    const base = `${mark}${`${ascii(first).slice(0, 1)}${ascii(last)}` || "user"}`;
    let username = base;
    for (let suffix = 2; usernames.has(username); suffix++) username = `${base}${suffix}`;
    usernames.add(username);
    return username;
  };
  const password = () => {
    const bytes = Array.from({ length: 24 }, () => Math.floor(random() * 256));
    return `{SSHA}${btoa(String.fromCharCode(...bytes))}`;
  };
  const email = (username: string) => `${username}@${pick(domains)}`;

  const user = (): UserRecord => {
    const [firstName, lastName] =
      random() < 0.06 ? pick(otherScripts) : [pick(firstNames), pick(lastNames)];
    const username = uniqueUsername(firstName, lastName);
    const record: UserRecord = {
      uuid: `${mark}${hex(8)}-${hex(4)}-4${hex(3)}-${pick(["8", "9", "a", "b"])}${hex(3)}-${hex(12)}`,
      userId: String(serial++),
      username,
      firstName,
      lastName,
      fullName: `${firstName} ${lastName}`,
      passwordFormat: "ssha",
      password: password(),
      email: email(username),
    };
    position.set(record.uuid, live.push(record) - 1);
    return structuredClone(record);
  };

  const modify = (target: UserRecord): UserRecord => {
    const kind = pick(["email", "password", "surname"] as const);
    const patch: UserRecord = { uuid: target.uuid };
    // Every change changes something: a directory does not report an entry saved unchanged.
    const other = (items: readonly string[], current?: string) =>
      pick(items.filter((item) => item !== current));
    if (kind === "email") {
      patch.email = `${target.username}@${other(domains, target.email?.split("@")[1])}`;
    }
    if (kind === "password") patch.password = password();
    if (kind === "surname") {
      // A new surname renames the account too; the uuid is what keeps it the same user.
      patch.lastName = other(lastNames, target.lastName);
      patch.fullName = `${target.firstName} ${patch.lastName}`;
      patch.username = uniqueUsername(target.firstName ?? "", patch.lastName);
      patch.email = email(patch.username);
    }
    Object.assign(target, patch);
    return patch;
  };

  const remove = (target: UserRecord): string => {
    const index = position.get(target.uuid) as number;
    const last = live.pop() as UserRecord;
    if (last !== target) {
      live[index] = last;
      position.set(last.uuid, index);
    }
    position.delete(target.uuid);
    return target.uuid;
  };

  return {
    user,
    users: (count) => Array.from({ length: count }, user),
    changes: (count) =>
      Array.from({ length: count }, (): DirectoryChange => {
        const roll = random();
        if (live.length === 0 || roll < 0.2) return { type: "add", user: user() };
        const target = pick(live);
        return roll < 0.4
          ? { type: "remove", uuid: remove(target) }
          : { type: "change", patch: modify(target) };
      }),
  };
}

/** The name folded to lowercase ASCII letters (Zoë → zoe), empty for a name in another script. */
function ascii(name: string): string {
  return name
    .normalize("NFKD")
    .replace(/[łŁ]/g, "l")
    .replace(/[øØ]/g, "o")
    .toLowerCase()
    .replace(/[^a-z]/g, "");
}

/** A small, fast, seedable PRNG: reproducible runs matter here, not cryptographic quality. */
function mulberry32(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let value = Math.imul(state ^ (state >>> 15), 1 | state);
    value = (value + Math.imul(value ^ (value >>> 7), 61 | value)) ^ value;
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(text)) hash = Math.imul(hash ^ byte, 0x01000193);
  return hash >>> 0;
}
