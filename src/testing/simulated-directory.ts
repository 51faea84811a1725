import type { JsonValue } from "type-fest";
import { mergeUser } from "../provisioning/merge-user.ts";
import type { UserPatch, UserRecord } from "../provisioning/user-store.ts";
import { toWireUser } from "./wire-user.ts";

/** A change in the simulated directory, as {@link PlatformSimulator.apply} takes it. */
export type DirectoryChange =
  | { type: "add"; user: UserRecord }
  /** Fields absent keep their value, `null` clears one (sent as JSON `null`). */
  | { type: "change"; patch: UserPatch }
  | { type: "remove"; uuid: string };

/**
 * What the platform sends for one directory change: a create or a modify with the wire body (a
 * modify carries the uuid and the changed fields only), or a delete.
 */
export type DirectoryMessage =
  | { kind: "create" | "modify"; uuid: string; body: Record<string, JsonValue> }
  | { kind: "delete"; uuid: string };

/**
 * The directory side of the simulator: users in memory and the message each change produces. The
 * delivery engine (platform-simulator.ts) knows nothing of how the users are kept, so that
 * another source of changes (a real LDAP directory) can feed the same engine.
 */
export interface SimulatedDirectory {
  /** Applies a change; returns its message, or undefined for a change that changes nothing. */
  apply(change: DirectoryChange): DirectoryMessage | undefined;
  /** The users, as copies. */
  users(): UserRecord[];
  /** A create for every user, as the initial sync and a re-sync after reset send them. */
  creates(): DirectoryMessage[];
  /** The uuids removed and not added again: users the application must no longer hold. */
  removed(): string[];
  readonly size: number;
}

/** An empty {@link SimulatedDirectory}. */
export function createSimulatedDirectory(): SimulatedDirectory {
  const users = new Map<string, UserRecord>();
  const removed = new Set<string>();
  const create = (user: UserRecord): DirectoryMessage => ({
    kind: "create",
    uuid: user.uuid,
    body: toWireUser(user),
  });
  return {
    apply(change) {
      if (change.type === "add") {
        const { uuid } = change.user;
        if (users.has(uuid)) throw new Error(`The directory already has a user ${uuid}`);
        const user = mergeUser(undefined, change.user);
        users.set(uuid, user);
        removed.delete(uuid);
        return create(user);
      }
      const uuid = change.type === "change" ? change.patch.uuid : change.uuid;
      const existing = users.get(uuid);
      if (!existing) throw new Error(`The directory has no user ${uuid}`);
      if (change.type === "remove") {
        users.delete(uuid);
        removed.add(uuid);
        return { kind: "delete", uuid };
      }
      const user = mergeUser(existing, change.patch);
      users.set(uuid, user);
      const body = changedFields(existing, user);
      // An LDAP entry saved unchanged produces no change to propagate.
      return Object.keys(body).length > 1 ? { kind: "modify", uuid, body } : undefined;
    },
    users: () => [...users.values()].map((user) => structuredClone(user)),
    creates: () => [...users.values()].map(create),
    removed: () => [...removed],
    get size() {
      return users.size;
    },
  };
}

/** uuid and the wire fields whose value differs, `null` for a field that is gone. */
function changedFields(before: UserRecord, after: UserRecord): Record<string, JsonValue> {
  const old = toWireUser(before);
  const now = toWireUser(after);
  const names = new Set([...Object.keys(old), ...Object.keys(now)]);
  return Object.fromEntries([
    ["uuid", after.uuid],
    ...[...names].flatMap((name) =>
      JSON.stringify(old[name]) === JSON.stringify(now[name]) ? [] : [[name, now[name] ?? null]],
    ),
  ]);
}
