// What a cycle sends, in which order: the directory diffed against the acknowledged state (or
// the Content Sync changes since the last completed cycle), deletes first and only past the
// delete guard, then each user whose record differs from the one the application acknowledged.
// A reset is a delete of every user the read does not return: it is judged as one, after that
// read and before it is sent.
import { changedFields, type OutgoingMessage } from "../platform/messages.ts";
import { toWireUser } from "../platform/wire-user.ts";
import type { UserRecord } from "../provisioning/user-record.ts";
import type { AcknowledgedState, WireRecord } from "./acknowledged-state.ts";
import type { Resume } from "./attempt-memory.ts";
import type { CycleTally } from "./cycle-tally.ts";
import type { DeleteGuardRun } from "./delete-guard.ts";
import type { SyncMode, SyncTargetOptions } from "./directory-sync-types.ts";
import type { DirectoryChanges, DirectorySource } from "./source.ts";

/**
 * A message of the cycle. A create or modify carries the whole record the application will hold
 * once it is acknowledged; a staging rename (a username swap) carries the temporary username.
 */
export type PlannedMessage = OutgoingMessage & {
  record?: WireRecord;
  staging?: string;
  /** A reset: how many acknowledged users it removes for good (the read did not return them). */
  removes?: number;
};

/** A cycle's messages, produced as the directory is read. */
export interface CyclePlan {
  messages: AsyncGenerator<PlannedMessage>;
  /**
   * The Content Sync cookie that describes the directory once every message is acknowledged
   * (known once the messages are read to the end); the sync keeps it only then.
   */
  readonly nextChangeCookie: string | undefined;
}

/** What a plan reads and where it counts. */
export interface CyclePlanInput {
  acknowledged: AcknowledgedState;
  directory: DirectorySource;
  mode: SyncMode;
  tally: CycleTally;
  resume: Resume;
  options: Pick<SyncTargetOptions, "resetRequest">;
  /** The sync's delete guard, which judges each destructive step before it is sent. */
  guard: DeleteGuardRun;
  signal: AbortSignal | undefined;
}

/** Plans one cycle; nothing is read before the first message is asked for. */
export function planCycle(input: CyclePlanInput): CyclePlan {
  const { acknowledged, directory, mode, tally, resume, options, guard, signal } = input;
  const { progress } = tally;
  let nextChangeCookie: string | undefined;

  const messageFor = (user: UserRecord): PlannedMessage | undefined => {
    const now = toWireUser(user);
    const before = acknowledged.get(user.uuid);
    let message: PlannedMessage;
    if (before === undefined || before === null) {
      message = resume({ kind: "create", uuid: user.uuid, body: now });
    } else {
      const changed = changedFields(before, acknowledged.protect(now, before));
      if (changed === undefined) {
        // An earlier version's password digest, rewritten without a message: unchanged.
        if (acknowledged.outdated(before)) acknowledged.acknowledge(now);
        progress.unchanged++;
        return undefined;
      }
      // The digest told that the password changed; the message carries the password.
      const body = Object.fromEntries(
        Object.keys(changed).map((name) => [name, Object.hasOwn(now, name) ? now[name] : null]),
      ) as WireRecord;
      message = resume({ kind: "modify", uuid: user.uuid, body });
    }
    message.record = now;
    return message;
  };

  const guardDeletes = (deletes: number) => guard.judge(deletes, () => acknowledged.count());

  /** Deletes for the acknowledged users the scan did not see, once the guard lets them. */
  function* deletesForUnseen(alsoDeleted = 0): Generator<PlannedMessage> {
    guardDeletes(acknowledged.unseenCount() + alsoDeleted);
    for (const uuid of acknowledged.unseen()) yield resume({ kind: "delete", uuid });
  }

  /** An update cycle from the changes since the Content Sync cookie: deletes first, then the changed. */
  function* planChanges(changes: DirectoryChanges): Generator<PlannedMessage> {
    const deleted = [...new Set(changes.deleted)].filter(
      (uuid) => acknowledged.get(uuid) !== undefined,
    );
    if (changes.present) {
      acknowledged.beginScan();
      acknowledged.markSeen(changes.present);
      acknowledged.markSeen(changes.changed.map((user) => user.uuid));
      // A user both deleted and not present counts once.
      acknowledged.markSeen(deleted);
      yield* deletesForUnseen(deleted.length);
    } else guardDeletes(deleted.length);
    for (const uuid of deleted) yield resume({ kind: "delete", uuid });
    tally.skip(changes.skipped);
    tally.countAccounts(changes);
    progress.read = changes.changed.length + changes.skipped.length;
    tally.notify();
    for (const user of changes.changed) {
      const message = messageFor(user);
      if (message) yield message;
    }
  }

  async function* plan(): AsyncGenerator<PlannedMessage> {
    const feed = directory.changes;
    const kept = acknowledged.changeCookie;
    if (mode === "update" && feed && kept?.scope === feed.scope) {
      const changes = await feed.changesSince(kept.cookie, { signal });
      if ("note" in changes) tally.readNote = changes.note;
      else {
        tally.read = changes.read ?? "content-sync";
        nextChangeCookie = changes.cookie;
        yield* planChanges(changes);
        return;
      }
    }
    if (feed) {
      acknowledged.changeCookie = undefined;
      // The Content Sync cookie of a full read is taken before it, so that it covers what the read
      // sees. It costs a read of every entry's uuid, so only an update cycle takes one: the
      // initial sync and a full re-sync send their first message at once, and the update cycle
      // after them reads the whole directory once more for it.
      if (mode === "update") {
        const now = await feed.cookieNow({ signal });
        if ("cookie" in now) nextChangeCookie = now.cookie;
        else if (now.note !== undefined) tally.readNote ??= now.note;
      }
    }
    const reset = acknowledged.resyncRequested && options.resetRequest === true;
    if (acknowledged.resyncRequested && !reset) acknowledged.forgetContents();
    if (acknowledged.count() > 0) {
      acknowledged.beginScan();
      let total = 0;
      for await (const page of directory.read({ uuidsOnly: true, signal })) {
        acknowledged.markSeen(page.users.map((user) => user.uuid));
        total += page.users.length;
      }
      progress.total = total;
      if (reset) {
        // The reset removes every user; those the read returned come back as creates, the
        // others are deleted for good: the guard judges them before the reset is sent.
        const removes = acknowledged.unseenCount();
        guardDeletes(removes);
        yield resume({ kind: "reset", removes });
      } else yield* deletesForUnseen();
    } else if (reset) {
      // The state holds no user: how many the reset removes is not known, but an empty read
      // would leave the application with none.
      let read = 0;
      for await (const page of directory.read({ uuidsOnly: true, signal })) {
        read += page.users.length;
        if (read > 0) break;
      }
      guard.judgeBlindReset(read);
      yield resume({ kind: "reset", removes: 0 });
    }
    for await (const page of directory.read({ uuidsOnly: false, signal })) {
      tally.skip(page.skipped);
      tally.countAccounts(page);
      progress.read += page.users.length + page.skipped.length;
      tally.notify();
      for (const user of page.users) {
        const message = messageFor(user);
        if (message) yield message;
      }
    }
  }

  return {
    messages: plan(),
    get nextChangeCookie() {
      return nextChangeCookie;
    },
  };
}
