// What a cycle sends, in which order: the directory diffed against the acknowledged state (or
// the Content Sync changes since the last completed cycle), deletes first and only past the
// delete guard, then each user whose record differs from the one the application acknowledged.
// A reset is a delete of every user the read does not return: it is judged as one, after that
// read and before it is sent.
import { changedFields, type OutgoingMessage } from "../platform/messages.ts";
import { toWireUser } from "../platform/wire-user.ts";
import type { UserRecord } from "../users/user-record.ts";
import type { AcknowledgedState, WireRecord } from "./acknowledged-state.ts";
import type { Resume } from "./attempt-memory.ts";
import type { CycleTally } from "./cycle-tally.ts";
import type { DeleteGuardRun, JudgeContext } from "./delete-guard.ts";
import type { SyncMode, SyncTargetOptions } from "./directory-sync-types.ts";
import type { DirectoryChanges, DirectoryPage, DirectorySource } from "./source.ts";

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

  const guardDeletes = (deletes: number, context: JudgeContext = {}) =>
    guard.judge(deletes, () => acknowledged.count(), {
      ...context,
      resetUnanswered: acknowledged.resetInFlight,
    });

  /** Deletes for the acknowledged users the scan did not see, once the guard lets them. */
  function* deletesForUnseen(also: string[] = []): Generator<PlannedMessage> {
    guardDeletes(acknowledged.unseenCount() + also.length, {
      uuids: function* () {
        yield* acknowledged.unseen();
        yield* also;
      },
    });
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
      yield* deletesForUnseen(deleted);
    } else guardDeletes(deleted.length, { uuids: () => deleted });
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
    if (reset) {
      yield* planReset();
      return;
    }
    const resync = acknowledged.resyncRequested;
    if (resync) acknowledged.forgetContents({ keepRequest: true });
    if (acknowledged.count() > 0) {
      acknowledged.beginScan();
      let total = 0;
      for await (const page of directory.read({ uuidsOnly: true, signal })) {
        acknowledged.markSeen(page.users.map((user) => user.uuid));
        total += page.users.length;
      }
      progress.total = total;
      // A full re-sync the guard stops stays asked for (every user is already to be sent whole).
      yield* deletesForUnseen();
    }
    if (resync) {
      acknowledged.resyncRequested = false;
      acknowledged.resetInFlight = false;
    }
    for await (const page of directory.read({ uuidsOnly: false, signal })) yield* sendPage(page);
  }

  /** Counts a page of the read that creates and modifies. */
  function countPage(page: DirectoryPage): void {
    tally.skip(page.skipped);
    tally.countAccounts(page);
    progress.read += page.users.length + page.skipped.length;
    tally.notify();
  }

  /** Counts a page of the read that creates and modifies, and yields its messages. */
  function* sendPage(page: DirectoryPage): Generator<PlannedMessage> {
    countPage(page);
    yield* messagesOf(page);
  }

  function* messagesOf(page: DirectoryPage): Generator<PlannedMessage> {
    for (const user of page.users) {
      const message = messageFor(user);
      if (message) yield message;
    }
  }

  /**
   * A full re-sync with POST /v1/reset. The reset removes every user; the users the creates that
   * follow it bring back are exactly those of one read, with every skip applied (a disabled
   * account kept, an entry without a uuid or a username): that read is done first, the users the
   * state holds and it does not bring back are judged as the cycle's deletes, and the reset and
   * the creates go from that same read. A second read could return fewer (another replica, a
   * change in between, a disabled account the uuid read counts as present): its missing users
   * would be removed by the reset and counted by nobody. The read is held in memory until its
   * creates are sent (docs/directory-sync.md says what that costs).
   */
  async function* planReset(): AsyncGenerator<PlannedMessage> {
    const pages: DirectoryPage[] = [];
    acknowledged.beginScan();
    let total = 0;
    let skipped = 0;
    for await (const page of directory.read({ uuidsOnly: false, signal })) {
      // Counted as read, so that a stop's report lists what the read skipped.
      countPage(page);
      pages.push(page);
      acknowledged.markSeen(page.users.map((user) => user.uuid));
      total += page.users.length;
      skipped += page.skipped.length;
    }
    progress.total = total;
    const held = acknowledged.count();
    let removes: number;
    if (held === 0 || acknowledged.heldUnknown) {
      // The state does not know what the application holds (a new or lost state file, or one
      // taken over from another directory or application): the reset may remove every user.
      guard.judgeBlindReset(total, held);
      removes = 0;
    } else {
      // Those the read returned come back as creates; the others are deleted for good.
      removes = acknowledged.unseenCount();
      guardDeletes(removes, { reset: { skipped }, uuids: () => acknowledged.unseen() });
    }
    // Recorded before it goes: if its answer never comes (the process killed, the answer lost),
    // a restart knows the application may hold none of the state's users.
    acknowledged.resetInFlight = true;
    yield resume({ kind: "reset", removes });
    for (let index = 0; index < pages.length; index++) {
      const page = pages[index] as DirectoryPage;
      // Handed out page by page: memory falls as the creates go.
      pages[index] = { users: [], skipped: [] };
      yield* messagesOf(page);
    }
  }
  return {
    messages: plan(),
    get nextChangeCookie() {
      return nextChangeCookie;
    },
  };
}
