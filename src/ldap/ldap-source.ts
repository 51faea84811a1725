// The LDAP source of a directory sync: its options, the paged full reads (two pages held,
// whatever the directory's size), and the choice of change feed for update cycles (Content Sync,
// or DirSync on Active Directory). The connection is ldap-connection.ts's.
import type { Client } from "ldapts";
import { redactUrl } from "../internal/url.ts";
import type { ChangeFeed, DirectoryPage, DirectorySource } from "../sync/source.ts";
import {
  addEntry,
  type DisabledAccounts,
  defaultFilter,
  type ReadPlan,
  type ServerProfile,
} from "./active-directory.ts";
import { createChangeFeed } from "./change-feed.ts";
import { createDirSyncFeed } from "./dirsync.ts";
import {
  createLdapConnection,
  type LdapConnection,
  type LdapConnectionOptions,
} from "./ldap-connection.ts";
import {
  attributesToRequest,
  bufferAttributeNames,
  type DirectoryMapping,
  toLdapEntry,
} from "./mapping.ts";

/** What {@link createLdapSource} reads. */
export interface LdapSourceOptions {
  ldap: LdapConnectionOptions;
  baseDn: string;
  /**
   * Which entries are users. Absent: {@link defaultFilter}, or person user accounts on Active
   * Directory (its root DSE tells), its system accounts left out.
   */
  filter?: string | undefined;
  mapping: DirectoryMapping;
  /** The caller named no username attribute: `sAMAccountName` replaces the mapping's on AD. */
  defaultUsername?: boolean;
  /** What a disabled Active Directory account becomes (default `"keep"`). */
  disabledAccounts?: DisabledAccounts;
  /** Attributes that mapping functions of the caller's read. */
  attributes?: readonly string[];
  /** Attributes to read as bytes beside objectGUID, objectSid and mS-DS-ConsistencyGuid. */
  binaryAttributes?: readonly string[];
  passwords: boolean;
  /** Entries per page of the paged search (RFC 2696); default 500, below AD's MaxPageSize 1000. */
  pageSize?: number;
  /** Offers Content Sync (RFC 4533) for update cycles where the server has it (default off). */
  contentSync?: boolean;
}

/**
 * The LDAP source of a directory sync: one connection, bound once, and a paged search (RFC
 * 2696, `pageSize` entries at a time) per read, so that memory holds two pages, whatever the
 * directory's size: the next page is read and mapped while this one is delivered.
 */
export function createLdapSource(options: LdapSourceOptions): DirectorySource {
  const { ldap, baseDn, passwords } = options;
  const connection = createLdapConnection(ldap, options.filter ?? defaultFilter, options);
  const asBuffers = bufferAttributeNames(options.binaryAttributes);
  return {
    // The filter is not part of it: changing it needs no re-sync, the next cycle's diff does it.
    identity: `${redactUrl(ldap.url)} ${baseDn}`,
    ...(options.contentSync && { changes: changeFeed(options, connection, asBuffers) }),
    async *read({ uuidsOnly, signal }): AsyncGenerator<DirectoryPage> {
      const pages = (async function* (): AsyncGenerator<DirectoryPage> {
        const client = await connection.connect();
        const plan = connection.plan as ReadPlan;
        const { ad, ...read } = plan;
        const search = client.searchPaginated(baseDn, {
          scope: "sub",
          filter: read.filter,
          attributes: uuidsOnly ? read.uuidAttributes : read.attributes,
          explicitBufferAttributes: asBuffers,
          paged: { pageSize: options.pageSize ?? 500 },
        });
        for await (const page of search) {
          const result: DirectoryPage = {
            users: [],
            skipped: [],
            ...(ad && !uuidsOnly && { disabled: 0, nonUsers: 0 }),
          };
          for (const raw of page.searchEntries) {
            addEntry(toLdapEntry(raw), plan, { uuidsOnly, passwords }, result);
          }
          yield result;
        }
      })();
      try {
        for await (const page of readAhead(pages)) {
          signal?.throwIfAborted();
          yield page;
        }
      } catch (error) {
        // The next read reconnects: a connection that failed mid-search is not reused.
        await connection.disconnect();
        throw connection.failure(error);
      }
    },
    close: connection.disconnect,
  };
}

/**
 * The change feed of update cycles: which one serves is known once the root DSE is read, DirSync
 * on Active Directory, Content Sync elsewhere.
 */
function changeFeed(
  options: LdapSourceOptions,
  connection: LdapConnection,
  bufferAttributes: string[],
): ChangeFeed {
  const { baseDn, mapping, passwords } = options;
  const { disconnect, failure } = connection;
  const contentSync = createChangeFeed({
    connect: connection.connect,
    disconnect,
    failure,
    baseDn,
    filter: options.filter ?? defaultFilter,
    mapping,
    attributes: attributesToRequest(mapping, {
      ...(options.attributes && { extra: options.attributes }),
      passwords,
    }),
    bufferAttributes,
    passwords,
  });
  const dirSync = createDirSyncFeed({
    connect: async () => {
      const client: Client = await connection.connect();
      return {
        client,
        profile: connection.profile as ServerProfile,
        plan: connection.plan as ReadPlan,
      };
    },
    disconnect,
    failure,
    baseDn,
    bufferAttributes,
    passwords,
    scope: JSON.stringify({
      filter: options.filter ?? null,
      disabledAccounts: options.disabledAccounts ?? "keep",
      defaultUsername: options.defaultUsername ?? false,
    }),
  });
  const feed = async () => {
    await connection.connect().catch((error) => {
      throw failure(error);
    });
    return connection.profile?.activeDirectory ? dirSync : contentSync;
  };
  return {
    scope: contentSync.scope,
    cookieNow: async (now) => (await feed()).cookieNow(now),
    changesSince: async (cookie, since) => (await feed()).changesSince(cookie, since),
  };
}

/**
 * Yields what `source` yields, asking for the next item as soon as one is handed out: the next
 * page is read from the directory and mapped while the caller delivers this one, one message at
 * a time, so that a sync waits on the directory only when it outpaces the application. At most
 * two pages are held.
 */
async function* readAhead<T>(source: AsyncGenerator<T>): AsyncGenerator<T> {
  let next = source.next();
  try {
    for (;;) {
      const result = await next;
      if (result.done) return;
      next = source.next();
      // Its failure is thrown where it is awaited, on the next turn of this loop.
      next.catch(() => undefined);
      yield result.value;
    }
  } finally {
    await source.return(undefined);
  }
}
