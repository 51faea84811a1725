import type { Client } from "ldapts";
import type { UserRecord } from "../provisioning/user-record.ts";
import type { ChangeFeed, DirectoryChanges, SkippedEntry } from "../sync/source.ts";
import {
  hookClient,
  refreshRequired,
  type SyncSearchHandlers,
  syncRequestOid,
  syncSearch,
} from "./content-sync.ts";
import type { SyncDoneValue } from "./content-sync-values.ts";
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

const everyCycle = ": every cycle reads the whole directory";
// LDAP result codes (RFC 4511) for a search over the account's limits.
const sizeLimitExceeded = 4;
const adminLimitExceeded = 11;
const thisCycle = ": this cycle read the whole directory";

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

/**
 * Content Sync (RFC 4533, refreshOnly) for the LDAP source. It serves only where every uuid is
 * the entryUUID the server's sync messages name entries by: the default mapping, or `entryUUID`,
 * with no entry carrying an objectGUID (checked on each full read and each changed entry).
 * Whatever it cannot serve, it answers with a note, and the cycle reads the whole directory.
 */
export function createChangeFeed(options: ChangeFeedOptions): ChangeFeed {
  const { baseDn, filter, mapping, attributes, passwords } = options;
  const byEntryUuid =
    mapping.uuid === directoryUuid ||
    (typeof mapping.uuid === "string" && mapping.uuid.toLowerCase() === "entryuuid");
  // A lasting reason Content Sync cannot serve; said in one report, then the diff mode runs.
  let off: string | undefined = byEntryUuid
    ? undefined
    : `Content Sync needs the uuid to be the entryUUID${everyCycle}`;
  let said = false;
  let offered: boolean | undefined;
  const lastingNote = (reason: string) => {
    off = reason;
    said = true;
    return { note: reason };
  };

  /** A connection ready for sync searches, or the reason there is none. */
  const ready = async (): Promise<Client | string> => {
    const client = await options.connect();
    if (!hookClient(client)) {
      return `this ldapts cannot be extended for Content Sync (its message parser changed)${everyCycle}`;
    }
    if (offered === undefined) {
      const { searchEntries } = await client.search("", {
        scope: "base",
        attributes: ["supportedControl"],
      });
      const controls = searchEntries[0]?.supportedControl ?? [];
      offered = (Array.isArray(controls) ? controls : [controls]).includes(syncRequestOid);
    }
    return offered ? client : `the server does not offer Content Sync (RFC 4533)${everyCycle}`;
  };

  /** Runs a sync search; a refusal by the server becomes a note, any other failure throws. */
  const search = async (
    client: Client,
    cookie: string | undefined,
    requested: string[],
    handlers: SyncSearchHandlers,
  ): Promise<SyncDoneValue | { note: string }> => {
    try {
      return await syncSearch(
        client,
        baseDn,
        {
          filter,
          attributes: requested,
          explicitBufferAttributes: options.bufferAttributes,
          ...(cookie !== undefined && { cookie: Buffer.from(cookie, "base64") }),
        },
        handlers,
      );
    } catch (error) {
      await options.disconnect();
      const code = (error as { code?: unknown }).code;
      const text = error instanceof Error ? error.message : String(error);
      if (code === 12) {
        return lastingNote(
          `the server does not offer Content Sync for ${baseDn} (${text})${everyCycle}`,
        );
      }
      // A Content Sync refresh is one search, which paged results cannot split: an account whose
      // paged reads are unlimited may still be held to the plain size limit, and no retry helps.
      if (code === sizeLimitExceeded || code === adminLimitExceeded) {
        return lastingNote(
          `the server holds the bind account to a size limit below the directory's size (${text}); ` +
            `Content Sync is one search, not paged: give the account no size limit (OpenLDAP: ` +
            `limits dn.exact="<bind DN>" size=unlimited)${everyCycle}`,
        );
      }
      if (code === refreshRequired) {
        return {
          note: `the server asked for a full reload (e-syncRefreshRequired)${thisCycle}`,
        };
      }
      if (typeof code === "number" || (error as Error).name === "SyncProtocolError") {
        return {
          note: `the server refused the Content Sync request (${text})${thisCycle}`,
        };
      }
      throw options.failure(error);
    }
  };

  const unavailable = () => {
    if (off === undefined || said) return {};
    said = true;
    return { note: off };
  };

  const mismatch = (dn: string) =>
    `the uuid of ${dn} is not its entryUUID, by which Content Sync names entries${everyCycle}`;

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
      if (off !== undefined) return unavailable();
      const client = await ready().catch((error) => {
        throw options.failure(error);
      });
      if (typeof client === "string") return lastingNote(client);
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
      if (foreign !== undefined) return lastingNote(mismatch(foreign));
      if (!done.cookie?.length)
        return {
          note: "the server sent no Content Sync cookie",
        };
      return { cookie: Buffer.from(done.cookie).toString("base64") };
    },

    async changesSince(cookie, { signal }) {
      if (off !== undefined) return lastingNote(off);
      const client = await ready().catch((error) => {
        throw options.failure(error);
      });
      if (typeof client === "string") return lastingNote(client);
      const changed: UserRecord[] = [];
      const skipped: SkippedEntry[] = [];
      const deleted: string[] = [];
      const present: string[] = [];
      let newest: Uint8Array | undefined;
      let overflow = false;
      let foreign: string | undefined;
      const done = await search(client, cookie, attributes, {
        entry(raw, state) {
          if (state.state === "present") present.push(state.uuid);
          else if (state.state === "delete") deleted.push(state.uuid);
          else if (changed.length + skipped.length >= maxChangedEntries) overflow = true;
          else {
            const user = mapEntry(toLdapEntry(raw), mapping, { passwords });
            if ("skipped" in user) skipped.push({ dn: raw.dn, reason: user.skipped });
            else if (user.uuid !== state.uuid) foreign ??= raw.dn;
            else changed.push(user);
          }
          if (state.cookie) newest = state.cookie;
        },
        info(value) {
          if (value.kind === "syncIdSet")
            (value.refreshDeletes ? deleted : present).push(...value.uuids);
          if (value.cookie) newest = value.cookie;
        },
      });
      signal?.throwIfAborted();
      if ("note" in done) return done;
      if (foreign !== undefined) return lastingNote(mismatch(foreign));
      if (overflow) {
        return {
          note: `more than ${maxChangedEntries} entries changed${thisCycle}`,
        };
      }
      // No cookie: nothing changed. An empty one: the server did not take ours and sent all.
      const next = done.cookie ?? newest;
      if (next?.length === 0) {
        return {
          note: `the server did not take the Content Sync cookie${thisCycle}`,
        };
      }
      const changes: DirectoryChanges = {
        changed,
        skipped,
        deleted,
        cookie: next ? Buffer.from(next).toString("base64") : cookie,
      };
      // refreshDeletes FALSE: the refresh ended with a present phase, which lists every user left.
      if (!done.refreshDeletes) changes.present = present;
      return changes;
    },
  };
}
