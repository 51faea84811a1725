import type { Client, Filter } from "ldapts";
import type { ChangeFeed, DirectoryChanges, DirectoryPage } from "../sync/source.ts";
import { addEntry, type ReadPlan, type ServerProfile } from "./active-directory.ts";
import { type DirSyncChange, dirSyncChanges, dirSyncOid } from "./dirsync-control.ts";
import { createFeedSwitch, everyCycle, thisCycle } from "./feed-notes.ts";
import { resultCode } from "./ldap-errors.ts";
import { directoryUuid, toLdapEntry } from "./mapping.ts";
import { objectGuidToString } from "./object-guid.ts";

// Incremental reads of Active Directory with DirSync (the control Entra Connect uses): the
// server tells which objects changed since a cookie, deleted ones included, with only their
// changed attributes. Rather than merging partial attributes into what was last read, each
// changed object is read again whole, in batches, under the base DN and with the filter: what is
// found is a user as a full read would map it, what is not (deleted, moved out, no longer
// matching the filter) is gone. The cookie is pinned to the domain controller that issued it (its
// invocationId): another one, or the same restored from a backup, gets a full read.

/** Beyond this many changed objects, a cycle reads the whole directory instead. */
export const maxDirSyncChanges = 10_000;

// The well-known GUID of the Deleted Objects container (MS-ADTS 6.1.1.4).
const deletedObjectsWkguid = "18E2EA80684F11D2B9AA00C04F79F805";
const showDeletedOid = "1.2.840.113556.1.4.417";
/** Objects read again per search: an OR of this many objectGUIDs. */
const batch = 100;

/** What {@link createDirSyncFeed} reads through the LDAP source. */
export interface DirSyncFeedOptions {
  /** A bound connection, the server's profile and the read plan (known once connected). */
  connect(): Promise<{ client: Client; profile: ServerProfile; plan: ReadPlan }>;
  disconnect(): Promise<void>;
  failure(error: unknown): Error;
  baseDn: string;
  /** The attributes read as bytes (objectGUID among them). */
  bufferAttributes: string[];
  passwords: boolean;
  /** What the cookie covers besides the directory: the filter, how accounts are told apart. */
  scope: string;
}

interface StoredCookie {
  /** The invocationId of the domain controller that issued it. */
  dc: string;
  scope: string;
  dirSync: string;
}

/**
 * DirSync for the LDAP source on Active Directory. It serves where the uuid is the objectGUID
 * (the default mapping), the server offers DirSync, and the bind account may use it ("Replicating
 * Directory Changes") and read the Deleted Objects container (without which DirSync leaves
 * deletions out); otherwise it says why, once, and the cycles read the whole directory.
 */
export function createDirSyncFeed(options: DirSyncFeedOptions): ChangeFeed {
  const feed = createFeedSwitch();
  let deletionsVisible: boolean | undefined;

  /** A connection ready for DirSync, or the lasting reason there is none. */
  const ready = async () => {
    const connected = await options.connect().catch((error) => {
      throw options.failure(error);
    });
    const { profile, plan } = connected;
    const uuid = plan.mapping.uuid;
    if (!(uuid === directoryUuid || (typeof uuid === "string" && /^objectguid$/i.test(uuid)))) {
      return `DirSync needs the uuid to be the objectGUID${everyCycle}`;
    }
    if (!profile.controls.includes(dirSyncOid) || profile.namingContext === undefined) {
      return `the server does not offer DirSync (${dirSyncOid})${everyCycle}`;
    }
    return { ...connected, namingContext: profile.namingContext };
  };

  /** The lasting reason DirSync would miss deletions, if the account cannot see them. */
  const blind = async (client: Client, namingContext: string) => {
    deletionsVisible ??= await canReadDeletedObjects(client, namingContext).catch((error) => {
      throw options.failure(error);
    });
    return deletionsVisible
      ? undefined
      : "the bind account cannot read the Deleted Objects container, so DirSync would not " +
          `tell deletions: grant it List Contents and Read Property there${everyCycle}`;
  };

  /** Runs DirSync; a refusal becomes a note, any other failure throws. */
  const changes = async (
    client: Client,
    namingContext: string,
    cookie: Uint8Array | undefined,
    attributes: string[],
  ) => {
    try {
      return await dirSyncChanges(client, namingContext, {
        cookie,
        attributes,
        limit: maxDirSyncChanges,
      });
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      const text = error instanceof Error ? error.message : String(error);
      if (code === resultCode.insufficientAccessRights) {
        return feed.lasting(
          `the bind account may not use DirSync (${text}): grant it "Replicating Directory ` +
            `Changes" on ${namingContext}${everyCycle}`,
        );
      }
      await options.disconnect();
      if (typeof code === "number" || (error as Error).name === "DirSyncError") {
        return { note: `the server refused the DirSync request (${text})${thisCycle}` };
      }
      throw options.failure(error);
    }
  };

  return {
    scope: options.scope,

    async cookieNow() {
      if (feed.off !== undefined) return feed.unavailable();
      const client = await ready();
      if (typeof client === "string") return feed.lasting(client);
      const dc = await invocationId(client.client, client.profile).catch((error) => {
        throw options.failure(error);
      });
      const now = await changes(client.client, client.namingContext, undefined, []);
      if ("note" in now) return now;
      const hidden = await blind(client.client, client.namingContext);
      if (hidden !== undefined) return feed.lasting(hidden);
      const stored: StoredCookie = {
        dc,
        scope: options.scope,
        dirSync: now.cookie.toString("base64"),
      };
      return { cookie: JSON.stringify(stored) };
    },

    async changesSince(cookie) {
      if (feed.off !== undefined) return feed.lasting(feed.off);
      const client = await ready();
      if (typeof client === "string") return feed.lasting(client);
      const stored = parseCookie(cookie);
      if (stored === undefined || stored.scope !== options.scope) {
        return { note: `the cookie was kept under other settings${thisCycle}` };
      }
      const dc = await invocationId(client.client, client.profile).catch((error) => {
        throw options.failure(error);
      });
      if (dc !== stored.dc) {
        return {
          note: `another domain controller answered (invocationId ${dc}, not ${stored.dc}), or it was restored${thisCycle}`,
        };
      }
      const hidden = await blind(client.client, client.namingContext);
      if (hidden !== undefined) return feed.lasting(hidden);
      const { plan } = client;
      const told = await changes(
        client.client,
        client.namingContext,
        Buffer.from(stored.dirSync, "base64"),
        [...plan.attributes, "name"],
      );
      if ("note" in told) return told;
      if (told.overflow) {
        return { note: `more than ${maxDirSyncChanges} objects changed${thisCycle}` };
      }
      const guids = new Map(
        told.changes.map((change) => [objectGuidToString(change.guid), change]),
      );
      const { page, found } = await readObjects(client.client, plan, guids, options).catch(
        async (error) => {
          await options.disconnect();
          throw options.failure(error);
        },
      );
      const result: DirectoryChanges = {
        read: "dirsync",
        changed: page.users,
        skipped: page.skipped,
        disabled: page.disabled ?? 0,
        nonUsers: page.nonUsers ?? 0,
        // Deleted, moved out of the base DN, or no longer matching the filter: gone for the sync.
        deleted: [...guids.keys()].filter((guid) => !found.has(guid)),
        cookie: JSON.stringify({ ...stored, dirSync: told.cookie.toString("base64") }),
      };
      return result;
    },
  };
}

/**
 * The objects DirSync named as changed, read again whole under the base DN and with the filter,
 * in batches: a user as a full read maps it, and the objectGUIDs found (one not found is gone).
 */
async function readObjects(
  client: Client,
  plan: ReadPlan,
  guids: Map<string, DirSyncChange>,
  options: DirSyncFeedOptions,
): Promise<{ page: DirectoryPage; found: Set<string> }> {
  const page: DirectoryPage = { users: [], skipped: [], disabled: 0, nonUsers: 0 };
  const found = new Set<string>();
  const ldapts = await import("ldapts");
  const filter = ldapts.FilterParser.parseString(plan.filter);
  const pending = [...guids.values()].filter((change) => !change.deleted);
  for (let start = 0; start < pending.length; start += batch) {
    const these = pending.slice(start, start + batch);
    const byGuid: Filter = new ldapts.OrFilter({
      filters: these.map(
        (change) => new ldapts.EqualityFilter({ attribute: "objectGUID", value: change.guid }),
      ),
    });
    const { searchEntries } = await client.search(options.baseDn, {
      scope: "sub",
      filter: new ldapts.AndFilter({ filters: [filter, byGuid] }),
      attributes: plan.attributes,
      explicitBufferAttributes: options.bufferAttributes,
    });
    for (const raw of searchEntries) {
      const entry = toLdapEntry(raw);
      const [guid] = entry.binary("objectGUID");
      if (guid?.length === 16) found.add(objectGuidToString(guid));
      addEntry(entry, plan, { uuidsOnly: false, passwords: options.passwords }, page);
    }
  }
  return { page, found };
}

function parseCookie(cookie: string): StoredCookie | undefined {
  try {
    const value = JSON.parse(cookie) as Partial<StoredCookie> | null;
    return typeof value?.dc === "string" &&
      typeof value.scope === "string" &&
      typeof value.dirSync === "string"
      ? (value as StoredCookie)
      : undefined;
  } catch {
    return undefined;
  }
}

/** The invocationId of the domain controller answering: it changes on another DC or a restore. */
async function invocationId(client: Client, profile: ServerProfile): Promise<string> {
  const { searchEntries } = await client.search(profile.dsServiceName ?? "", {
    scope: "base",
    attributes: ["invocationId"],
    explicitBufferAttributes: ["invocationId"],
  });
  const value = searchEntries[0]?.invocationId;
  return Buffer.isBuffer(value) && value.length === 16 ? objectGuidToString(value) : "unknown";
}

/**
 * Whether the account may read the Deleted Objects container, without which DirSync omits
 * deletions from its answers (Samba; AD documents the same grant for DirSync by non-admins).
 */
async function canReadDeletedObjects(client: Client, namingContext: string): Promise<boolean> {
  const { Control } = await import("ldapts");
  try {
    const { searchEntries } = await client.search(
      `<WKGUID=${deletedObjectsWkguid},${namingContext}>`,
      { scope: "base", attributes: ["isDeleted"] },
      [new Control(showDeletedOid, { critical: true })],
    );
    // Without Read Property there, the entry comes back without its attributes.
    return String(searchEntries[0]?.isDeleted).toUpperCase() === "TRUE";
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    // No such object (32) or no access (50): the container is hidden from this account.
    if (code === resultCode.noSuchObject || code === resultCode.insufficientAccessRights) {
      return false;
    }
    throw error;
  }
}
