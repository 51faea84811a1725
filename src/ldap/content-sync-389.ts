// Content Sync on 389 Directory Server, which differs from OpenLDAP's: it names entries by
// entryUUID only when its plugin allows OpenLDAP consumers and the first cookie is OpenLDAP's
// form; it sends a changed entry without the operational attributes asked for (entryUUID), and
// nothing for an entry that a modify took out of the filter. So its sync search asks for every
// change under the base, and the changed entries are read again here, by entryUUID, with the
// filter and the attributes the sync needs.
import type { Client } from "ldapts";
import type { SkippedEntry } from "../sync/source.ts";
import type { UserRecord } from "../users/user-record.ts";
import { type DirectoryMapping, mapEntry, toLdapEntry } from "./mapping.ts";

/**
 * The first cookie in OpenLDAP's form (`rid=NNN`, no CSN): with it, and its plugin's
 * `syncrepl-allow-openldap: on`, 389-DS names entries by entryUUID, with cookies of that form.
 */
export const firstCookie389 = Buffer.from("rid=000");

/** What 389-DS needs for Content Sync by entryUUID. */
export const fix389 =
  "(dsconf INSTANCE plugin contentsync set --allow-openldap on) and a retro changelog that " +
  "keeps nsuniqueid:targetUniqueId and entryuuid:targetEntryUUID (nsslapd-attribute), then a restart";

/** How many uuids one search of the changed entries names. */
const uuidsPerSearch = 100;

/** What {@link readChanged} searches with: the sync's own reads. */
export interface ChangedReadOptions {
  baseDn: string;
  filter: string;
  attributes: string[];
  bufferAttributes: string[];
  mapping: DirectoryMapping;
  passwords: boolean;
}

/**
 * The entries the sync search named as changed, read with the filter and the sync's attributes,
 * in the order it named them. One the filter no longer matches, or no longer under the base
 * (deleted or moved since), is `gone`: the next cycle sends what a move did. `foreign` when an
 * entry's uuid is not the entryUUID the server named it by.
 */
export async function readChanged(
  client: Client,
  touched: string[],
  options: ChangedReadOptions,
): Promise<
  { changed: UserRecord[]; skipped: SkippedEntry[]; gone: string[] } | { foreign: string }
> {
  const { baseDn, filter, attributes, mapping, passwords } = options;
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
