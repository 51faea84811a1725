// Content Sync (RFC 4533, refreshOnly) as the LDAP source's change feed: when it can serve, the
// sync searches and what their messages tell, and the refusals that send a cycle to a full read.
// The protocol's messages are content-sync.ts's; 389 Directory Server's second step is
// content-sync-389.ts's.
import type { Client } from "ldapts";
import type { ChangeFeed, DirectoryChanges, SkippedEntry } from "../sync/source.ts";
import type { UserRecord } from "../users/user-record.ts";
import {
  hookClient,
  refreshRequired,
  type SyncSearchHandlers,
  syncRequestOid,
  syncSearch,
} from "./content-sync.ts";
import { firstCookie389, fix389, readChanged } from "./content-sync-389.ts";
import type { SyncDoneValue } from "./content-sync-values.ts";
import { createFeedSwitch, everyCycle, thisCycle } from "./feed-notes.ts";
import { isOverLimit, resultCode } from "./ldap-errors.ts";
import {
  type DirectoryMapping,
  directoryUuid,
  mapEntry,
  toLdapEntry,
  uuidAttributes,
} from "./mapping.ts";

/**
 * Beyond this many changed entries, a cycle reads the whole directory instead: a Content Sync
 * cycle holds its changed entries until the deletions are known (they are sent first), and a
 * full read holds two pages whatever the directory's size.
 */
export const maxChangedEntries = 10_000;

/** What {@link createChangeFeed} reads, as the LDAP source does. */
export interface ChangeFeedOptions {
  connect(): Promise<Client>;
  /** Drops the connection: one that failed mid-search is not reused. */
  disconnect(): Promise<void>;
  /** Makes an error of the connection what the source throws for it. */
  failure(error: unknown): Error;
  baseDn: string;
  filter: string;
  mapping: DirectoryMapping;
  attributes: string[];
  /** The attributes read as bytes (ldapts's explicitBufferAttributes). */
  bufferAttributes: string[];
  passwords: boolean;
}

/** What the root DSE told, read on the first connection. */
interface ServerFacts {
  offered?: boolean;
  ds389: boolean;
}

/**
 * Content Sync (RFC 4533, refreshOnly) for the LDAP source. It serves only where every uuid is
 * the entryUUID the server's sync messages name entries by: the default mapping, or `entryUUID`,
 * with no entry carrying an objectGUID (checked on each full read and each changed entry).
 * Whatever it cannot serve, it answers with a note, and the cycle reads the whole directory.
 * A changed entry that cannot be mapped keeps the cookie where it was: the next cycle reads it
 * again, so that a change the sync could not send is never passed over.
 *
 * 389 Directory Server gets a second step (content-sync-389.ts): its sync search asks for every
 * change under the base, whatever the filter, and the changed entries are then read by entryUUID.
 */
export function createChangeFeed(options: ChangeFeedOptions): ChangeFeed {
  const { baseDn, filter, mapping, attributes, passwords } = options;
  const byEntryUuid =
    mapping.uuid === directoryUuid ||
    (typeof mapping.uuid === "string" && mapping.uuid.toLowerCase() === "entryuuid");
  // A lasting reason Content Sync cannot serve; said in one report, then the diff mode runs.
  const feed = createFeedSwitch(
    byEntryUuid ? undefined : `Content Sync needs the uuid to be the entryUUID${everyCycle}`,
  );
  const server: ServerFacts = { ds389: false };

  const connected = () =>
    ready(options, server).catch((error) => {
      throw options.failure(error);
    });

  /** Runs a sync search; a refusal by the server becomes a note, any other failure throws. */
  const search = async (
    client: Client,
    cookie: string | undefined,
    requested: string[],
    handlers: SyncSearchHandlers,
    searchFilter = filter,
  ): Promise<SyncDoneValue | { note: string }> => {
    try {
      return await syncSearch(
        client,
        baseDn,
        {
          filter: searchFilter,
          attributes: requested,
          explicitBufferAttributes: options.bufferAttributes,
          ...(cookie !== undefined
            ? { cookie: Buffer.from(cookie, "base64") }
            : server.ds389 && { cookie: firstCookie389 }),
        },
        handlers,
      );
    } catch (error) {
      await options.disconnect();
      const refused = refusal(error, baseDn, server.ds389 && cookie === undefined);
      if (refused === undefined) throw options.failure(error);
      return refused.lasting ? feed.lasting(refused.note) : { note: refused.note };
    }
  };

  const mismatch = (dn: string) =>
    server.ds389
      ? `389 Directory Server named ${dn} by other than its entryUUID in Content Sync; it names ` +
        `entries by entryUUID with syncrepl-allow-openldap on ${fix389}${everyCycle}`
      : `the uuid of ${dn} is not its entryUUID, by which Content Sync names entries${everyCycle}`;

  return {
    // The base and the filter too: a cookie taken under another filter would never send the
    // entries the new one takes in, as they did not change since.
    scope: JSON.stringify({
      baseDn,
      filter,
      attributes,
      passwords,
      mapping: Object.entries(mapping).map(([field, source]) => [field, String(source)]),
    }),

    async cookieNow({ signal }) {
      if (feed.off !== undefined) return feed.unavailable();
      const client = await connected();
      if (typeof client === "string") return feed.lasting(client);
      let foreign: string | undefined;
      const done = await search(client, undefined, [...uuidAttributes], {
        entry(raw, state) {
          const uuid = directoryUuid(toLdapEntry(raw));
          if (uuid !== undefined && uuid !== state.uuid) foreign ??= raw.dn;
        },
        info() {},
      });
      signal?.throwIfAborted();
      if ("note" in done) return done;
      if (foreign !== undefined) return feed.lasting(mismatch(foreign));
      if (!done.cookie?.length)
        return {
          note: "the server sent no Content Sync cookie",
        };
      return { cookie: Buffer.from(done.cookie).toString("base64") };
    },

    async changesSince(cookie, { signal }) {
      if (feed.off !== undefined) return feed.lasting(feed.off);
      const client = await connected();
      if (typeof client === "string") return feed.lasting(client);
      const { ds389 } = server;
      const told = gather(mapping, passwords, ds389);
      const done = await search(
        client,
        cookie,
        ds389 ? ["1.1"] : attributes,
        told.handlers,
        ds389 ? "(objectClass=*)" : filter,
      );
      signal?.throwIfAborted();
      if ("note" in done) return done;
      if (told.overflow) {
        return {
          note: `more than ${maxChangedEntries} entries changed${thisCycle}`,
        };
      }
      // A present phase lists every entry under the base, which the filter was not applied to.
      if (ds389 && !done.refreshDeletes && told.present.length > 0) {
        return { note: `389 Directory Server answered with a present phase${thisCycle}` };
      }
      if (ds389 && told.touched.length > 0) {
        const read = await readChanged(client, told.touched, options).catch(async (error) => {
          await options.disconnect();
          throw options.failure(error);
        });
        signal?.throwIfAborted();
        if ("foreign" in read) told.foreign = read.foreign;
        else {
          told.changed.push(...read.changed);
          told.skipped.push(...read.skipped);
          told.deleted.push(...read.gone);
        }
      }
      if (told.foreign !== undefined) return feed.lasting(mismatch(told.foreign));
      return changesOf(done, told, cookie);
    },
  };
}

/** A connection ready for sync searches, or the lasting reason there is none. */
async function ready(options: ChangeFeedOptions, server: ServerFacts): Promise<Client | string> {
  const client = await options.connect();
  if (!hookClient(client)) {
    return `this ldapts cannot be extended for Content Sync (its message parser changed)${everyCycle}`;
  }
  if (server.offered === undefined) {
    const { searchEntries } = await client.search("", {
      scope: "base",
      attributes: ["supportedControl", "vendorName"],
    });
    const controls = searchEntries[0]?.supportedControl ?? [];
    server.offered = (Array.isArray(controls) ? controls : [controls]).includes(syncRequestOid);
    server.ds389 = /^389 Project/i.test(String(searchEntries[0]?.vendorName ?? ""));
  }
  return server.offered ? client : `the server does not offer Content Sync (RFC 4533)${everyCycle}`;
}

/**
 * A sync search the server refused, as the note of the cycle (`lasting` when every cycle after it
 * would meet the same refusal); undefined for a failure that is not a refusal.
 */
function refusal(
  error: unknown,
  baseDn: string,
  first389: boolean,
): { note: string; lasting: boolean } | undefined {
  const code = (error as { code?: unknown }).code;
  const text = error instanceof Error ? error.message : String(error);
  const lasting = (note: string) => ({ note, lasting: true });
  if (code === resultCode.unavailableCriticalExtension) {
    return lasting(`the server does not offer Content Sync for ${baseDn} (${text})${everyCycle}`);
  }
  // A Content Sync refresh is one search, which paged results cannot split: an account whose
  // paged reads are unlimited may still be held to the plain size limit, and no retry helps.
  if (isOverLimit(code)) {
    return lasting(
      `the server holds the bind account to a size limit below the directory's size (${text}); ` +
        `Content Sync is one search, not paged: give the account no size limit (OpenLDAP: ` +
        `limits dn.exact="<bind DN>" size=unlimited; 389 Directory Server: nsSizeLimit: -1 ` +
        `on the bind account's entry)${everyCycle}`,
    );
  }
  if (code === refreshRequired && first389) {
    // The first cookie (rid=000) is refused where the plugin does not allow OpenLDAP's form.
    return lasting(
      `389 Directory Server refused an OpenLDAP-style first Content Sync cookie (${text}): ` +
        `it names entries by entryUUID only with syncrepl-allow-openldap on ${fix389}${everyCycle}`,
    );
  }
  if (code === refreshRequired) {
    return {
      note: `the server asked for a full reload (e-syncRefreshRequired)${thisCycle}`,
      lasting: false,
    };
  }
  if (typeof code === "number" || (error as Error).name === "SyncProtocolError") {
    return {
      note: `the server refused the Content Sync request (${text})${thisCycle}`,
      lasting: false,
    };
  }
  return undefined;
}

/** What a sync search's messages told, gathered as they arrive. */
interface Gathered {
  handlers: SyncSearchHandlers;
  changed: UserRecord[];
  skipped: SkippedEntry[];
  deleted: string[];
  present: string[];
  /** 389-DS: the changed entries' uuids, read again (content-sync-389.ts). */
  touched: string[];
  newest: Uint8Array | undefined;
  overflow: boolean;
  /** An entry whose uuid is not the entryUUID the server named it by. */
  foreign: string | undefined;
}

/** Handlers that gather a sync search's changes, mapped as the full read maps them. */
function gather(mapping: DirectoryMapping, passwords: boolean, ds389: boolean): Gathered {
  const told: Gathered = {
    changed: [],
    skipped: [],
    deleted: [],
    present: [],
    touched: [],
    newest: undefined,
    overflow: false,
    foreign: undefined,
    handlers: {
      entry(raw, state) {
        if (state.state === "present") told.present.push(state.uuid);
        else if (state.state === "delete") told.deleted.push(state.uuid);
        else if (
          told.changed.length + told.skipped.length + told.touched.length >=
          maxChangedEntries
        )
          told.overflow = true;
        else if (ds389) told.touched.push(state.uuid);
        else {
          const user = mapEntry(toLdapEntry(raw), mapping, { passwords });
          if ("skipped" in user) told.skipped.push({ dn: raw.dn, reason: user.skipped });
          else if (user.uuid !== state.uuid) told.foreign ??= raw.dn;
          else told.changed.push(user);
        }
        if (state.cookie) told.newest = state.cookie;
      },
      info(value) {
        if (value.kind === "syncIdSet")
          (value.refreshDeletes ? told.deleted : told.present).push(...value.uuids);
        if (value.cookie) told.newest = value.cookie;
      },
    },
  };
  return told;
}

/** The cycle's changes, with the cookie to resume from, or why the cycle reads everything. */
function changesOf(
  done: SyncDoneValue,
  told: Gathered,
  cookie: string,
): DirectoryChanges | { note: string } {
  // No cookie: nothing changed. An empty one: the server did not take ours and sent all.
  const next = done.cookie ?? told.newest;
  if (next?.length === 0) {
    return {
      note: `the server did not take the Content Sync cookie${thisCycle}`,
    };
  }
  const changes: DirectoryChanges = {
    changed: told.changed,
    skipped: told.skipped.map(keepCookie),
    deleted: told.deleted,
    // An entry that could not be mapped is read again next cycle, from the same cookie.
    cookie: next && told.skipped.length === 0 ? Buffer.from(next).toString("base64") : cookie,
  };
  // refreshDeletes FALSE: the refresh ended with a present phase, which lists every user left.
  if (!done.refreshDeletes) changes.present = told.present;
  return changes;
}

/** Keeps the cookie before an entry that cannot be mapped, and says so in its reason. */
function keepCookie(entry: SkippedEntry): SkippedEntry {
  return {
    dn: entry.dn,
    reason: `${entry.reason}; the Content Sync cookie stays before it, so that the next cycle reads it again`,
  };
}
