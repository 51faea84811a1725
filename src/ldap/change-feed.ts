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
 * 389 Directory Server names Content Sync entries by nsUniqueId, unless its plugin allows
 * OpenLDAP consumers (`syncrepl-allow-openldap: on`) and the first cookie is OpenLDAP's form
 * (`rid=NNN`, no CSN): then by entryUUID, with cookies of the same form.
 */
const firstCookie389 = Buffer.from("rid=000");
const fix389 =
  "(dsconf INSTANCE plugin contentsync set --allow-openldap on) and a retro changelog that " +
  "keeps nsuniqueid:targetUniqueId and entryuuid:targetEntryUUID (nsslapd-attribute), then a restart";
/** How many uuids one search of the changed entries names (389-DS, below). */
const uuidsPerSearch = 100;

/**
 * Content Sync (RFC 4533, refreshOnly) for the LDAP source. It serves only where every uuid is
 * the entryUUID the server's sync messages name entries by: the default mapping, or `entryUUID`,
 * with no entry carrying an objectGUID (checked on each full read and each changed entry).
 * Whatever it cannot serve, it answers with a note, and the cycle reads the whole directory.
 * A changed entry that cannot be mapped keeps the cookie where it was: the next cycle reads it
 * again, so that a change the sync could not send is never passed over.
 *
 * 389 Directory Server gets a second step: it sends a changed entry with every user attribute but
 * without the operational ones asked for (entryUUID), and sends nothing for an entry that a modify
 * took out of the filter. So its sync search asks for every change under the base, whatever the
 * filter, and the changed entries are then read, by entryUUID, with the filter and the attributes
 * the sync needs; a changed entry the filter no longer matches is deleted.
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
  let ds389 = false;
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
        attributes: ["supportedControl", "vendorName"],
      });
      const controls = searchEntries[0]?.supportedControl ?? [];
      offered = (Array.isArray(controls) ? controls : [controls]).includes(syncRequestOid);
      ds389 = /^389 Project/i.test(String(searchEntries[0]?.vendorName ?? ""));
    }
    return offered ? client : `the server does not offer Content Sync (RFC 4533)${everyCycle}`;
  };

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
            : ds389 && { cookie: firstCookie389 }),
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
            `limits dn.exact="<bind DN>" size=unlimited; 389 Directory Server: nsSizeLimit: -1 ` +
            `on the bind account's entry)${everyCycle}`,
        );
      }
      if (code === refreshRequired && ds389 && cookie === undefined) {
        // The first cookie (rid=000) is refused where the plugin does not allow OpenLDAP's form.
        return lastingNote(
          `389 Directory Server refused an OpenLDAP-style first Content Sync cookie (${text}): ` +
            `it names entries by entryUUID only with syncrepl-allow-openldap on ${fix389}${everyCycle}`,
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
    ds389
      ? `389 Directory Server named ${dn} by other than its entryUUID in Content Sync; it names ` +
        `entries by entryUUID with syncrepl-allow-openldap on ${fix389}${everyCycle}`
      : `the uuid of ${dn} is not its entryUUID, by which Content Sync names entries${everyCycle}`;

  /** Keeps the cookie before an entry that cannot be mapped, and says so in its reason. */
  const keepCookie = (entry: SkippedEntry): SkippedEntry => ({
    dn: entry.dn,
    reason: `${entry.reason}; the Content Sync cookie stays before it, so that the next cycle reads it again`,
  });

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
      // 389-DS: the changed entries' uuids, read again below.
      const touched: string[] = [];
      let newest: Uint8Array | undefined;
      let overflow = false;
      let foreign: string | undefined;
      const done = await search(
        client,
        cookie,
        ds389 ? ["1.1"] : attributes,
        {
          entry(raw, state) {
            if (state.state === "present") present.push(state.uuid);
            else if (state.state === "delete") deleted.push(state.uuid);
            else if (changed.length + skipped.length + touched.length >= maxChangedEntries)
              overflow = true;
            else if (ds389) touched.push(state.uuid);
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
        },
        ds389 ? "(objectClass=*)" : filter,
      );
      signal?.throwIfAborted();
      if ("note" in done) return done;
      if (overflow) {
        return {
          note: `more than ${maxChangedEntries} entries changed${thisCycle}`,
        };
      }
      // A present phase lists every entry under the base, which the filter was not applied to.
      if (ds389 && !done.refreshDeletes && present.length > 0) {
        return { note: `389 Directory Server answered with a present phase${thisCycle}` };
      }
      if (ds389 && touched.length > 0) {
        const read = await readChanged(client, touched).catch(async (error) => {
          await options.disconnect();
          throw options.failure(error);
        });
        signal?.throwIfAborted();
        if ("foreign" in read) foreign = read.foreign;
        else {
          changed.push(...read.changed);
          skipped.push(...read.skipped);
          deleted.push(...read.gone);
        }
      }
      if (foreign !== undefined) return lastingNote(mismatch(foreign));
      // No cookie: nothing changed. An empty one: the server did not take ours and sent all.
      const next = done.cookie ?? newest;
      if (next?.length === 0) {
        return {
          note: `the server did not take the Content Sync cookie${thisCycle}`,
        };
      }
      const changes: DirectoryChanges = {
        changed,
        skipped: skipped.map(keepCookie),
        deleted,
        // An entry that could not be mapped is read again next cycle, from the same cookie.
        cookie: next && skipped.length === 0 ? Buffer.from(next).toString("base64") : cookie,
      };
      // refreshDeletes FALSE: the refresh ended with a present phase, which lists every user left.
      if (!done.refreshDeletes) changes.present = present;
      return changes;
    },
  };

  /**
   * 389-DS: the entries its sync search named as changed, read with the filter and the sync's
   * attributes, in the order it named them. One the filter no longer matches, or no longer under
   * the base (deleted or moved since), is `gone`: the next cycle sends what a move did.
   * `foreign` when an entry's uuid is not the entryUUID the server named it by.
   */
  async function readChanged(
    client: Client,
    touched: string[],
  ): Promise<
    { changed: UserRecord[]; skipped: SkippedEntry[]; gone: string[] } | { foreign: string }
  > {
    const uuids = [...new Set(touched.map((uuid) => uuid.toLowerCase()))];
    const matching = new Map<string, { dn: string; [attribute: string]: unknown }>();
    for (let start = 0; start < uuids.length; start += uuidsPerSearch) {
      const batch = uuids.slice(start, start + uuidsPerSearch);
      const { searchEntries } = await client.search(baseDn, {
        scope: "sub",
        filter: `(&${parenthesized(filter)}(|${batch.map((uuid) => `(entryUUID=${escapeFilterValue(uuid)})`).join("")}))`,
        // They name entryUUID: Content Sync runs only where the uuid is the entryUUID.
        attributes,
        explicitBufferAttributes: options.bufferAttributes,
      });
      for (const entry of searchEntries) {
        const uuid = toLdapEntry(entry as never).first("entryUUID");
        if (uuid !== undefined) matching.set(uuid.toLowerCase(), entry);
      }
    }
    const changed: UserRecord[] = [];
    const skipped: SkippedEntry[] = [];
    const gone: string[] = [];
    for (const uuid of uuids) {
      const entry = matching.get(uuid);
      if (!entry) {
        gone.push(uuid);
        continue;
      }
      const user = mapEntry(toLdapEntry(entry as never), mapping, { passwords });
      if ("skipped" in user) skipped.push({ dn: entry.dn, reason: user.skipped });
      else if (user.uuid.toLowerCase() !== uuid) return { foreign: entry.dn };
      else changed.push(user);
    }
    return { changed, skipped, gone };
  }
}

/** A filter in parentheses, as RFC 4515 wants it inside another. */
function parenthesized(filter: string): string {
  const trimmed = filter.trim();
  return trimmed.startsWith("(") ? trimmed : `(${trimmed})`;
}

/** RFC 4515: a value in a filter with its special characters escaped. */
function escapeFilterValue(value: string): string {
  return value.replace(
    /[\\*()\0]/g,
    (character) => `\\${character.charCodeAt(0).toString(16).padStart(2, "0")}`,
  );
}
