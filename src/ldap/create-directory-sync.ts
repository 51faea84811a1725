import { redactUrl } from "../internal/url.ts";
import { createSourceSync } from "../sync/directory-sync.ts";
import type { DirectorySync, SyncTargetOptions } from "../sync/directory-sync-types.ts";
import type { DirectorySource } from "../sync/source.ts";
import type { DisabledAccounts } from "./active-directory.ts";
import type { LdapConnectionOptions } from "./ldap-connection.ts";
import { createLdapSource, type LdapSourceOptions } from "./ldap-source.ts";
import { type DirectoryMapping, defaultMapping, type fromAttributes } from "./mapping.ts";
import { readInWorker } from "./read-worker.ts";

/** The options of {@link createDirectorySync} reading an LDAP server or Active Directory. */
export interface LdapSyncOptions extends SyncTargetOptions {
  ldap: LdapConnectionOptions;
  /** Where the users are: `ou=people,dc=example,dc=com`. */
  baseDn: string;
  /**
   * Which entries are users. By default `(objectClass=person)`; on Active Directory (its root
   * DSE tells) person user accounts, `(&(objectCategory=person)(objectClass=user))`, leaving out
   * computers, contacts and the domain's system accounts (Administrator, Guest, krbtgt, DNS
   * service accounts: isCriticalSystemObject). A filter of yours decides alone which entries
   * are users.
   */
  filter?: string;
  /**
   * The attribute that gives the username: `uid` by default, `sAMAccountName` on Active
   * Directory.
   */
  usernameField?: string;
  /**
   * What a disabled Active Directory account (userAccountControl with ACCOUNTDISABLE) becomes.
   * `"keep"` (default) destroys nothing: no message goes for it, so the application keeps the
   * user as it last acknowledged it (no delete, no modify) and gets no new user for a disabled
   * account; once the account is enabled again, the changes made meanwhile are sent. `"sync"`
   * sends it as any other user. `"delete"` treats it as gone: a user the application holds is
   * deleted (and created again once the account is enabled). The report's `disabled` counts them.
   */
  disabledAccounts?: DisabledAccounts;
  /** Fields mapped otherwise than by {@link defaultMapping}; `null` leaves a field out. */
  mapping?: Partial<DirectoryMapping>;
  /**
   * Attributes your mapping functions read, when they do not declare theirs with
   * {@link fromAttributes} (by default every user and operational attribute, `*` and `+`, is read
   * for them).
   */
  attributes?: readonly string[];
  /**
   * Attributes to read as bytes, never as text, beside objectGUID, objectSid and
   * mS-DS-ConsistencyGuid: a mapping by name sends their base64.
   */
  binaryAttributes?: readonly string[];
  /** Sends userPassword as password and its `{SCHEME}` as password_format. Off by default. */
  passwords?: boolean;
  /** Entries per page of the paged search (default 500). */
  pageSize?: number;
  /** Lets a full re-sync take over a state file kept for another directory or target. */
  adoptState?: boolean;
  /**
   * `"auto"` (default): where the server offers Content Sync (RFC 4533: OpenLDAP's syncprov,
   * 389-DS), an update cycle reads only what changed since the last completed cycle; elsewhere
   * (Active Directory included) it reads the whole directory. `false`: every cycle reads the
   * whole directory. Either way the messages are the difference from what the application
   * acknowledged; the report's `read` says which ran.
   */
  contentSync?: "auto" | false;
  /**
   * Reads and maps the directory in a worker thread, so that decoding LDAP pages runs beside the
   * delivery rather than between its messages (the CLI does; see docs/directory-sync.md for the
   * figures). It takes a thread and about 10 MiB more, and options that can cross to a thread:
   * attribute names and the defaults' functions in `mapping`, no function in `ldap.tls`
   * (otherwise a TypeError at once). The thread runs the SDK's own module file again, so leave it
   * off where the SDK is bundled into your application's file, which the thread would start. Off
   * by default.
   */
  readInWorker?: boolean;
}

/** The options of {@link createDirectorySync} reading any other {@link DirectorySource}. */
export interface SourceSyncOptions extends SyncTargetOptions {
  source: DirectorySource;
  adoptState?: boolean;
}

/**
 * Plays the platform's part for real: keeps an LDAP directory or Active Directory in sync with any
 * Provisioning API. Each cycle pings, then sends deletes for users gone from the directory,
 * creates for new ones and modifies (changed fields and uuid) for changed ones, one at a time, in
 * order; only 201 (create) and 204 count as success, anything else stops the cycle, and the next
 * starts again with that message. The records the application acknowledged are the cookie, in
 * a SQLite file, written after each acknowledgement: a restart resumes where it stopped.
 *
 * Needs Node 22.13+ (node:sqlite) and the optional peer dependency `ldapts`.
 *
 * @example
 * ```ts
 * const sync = createDirectorySync({
 *   ldap: { url: "ldaps://ldap.example.com", bindDn: "cn=reader,dc=example,dc=com", password },
 *   baseDn: "ou=people,dc=example,dc=com",
 *   target: "http://127.0.0.1:3000",
 *   state: "./directory-sync.sqlite",
 * });
 * const report = await sync.syncOnce();
 * console.log(report.created, report.modified, report.deleted, report.unchanged);
 * await sync.close();
 * ```
 */
export function createDirectorySync(options: LdapSyncOptions | SourceSyncOptions): DirectorySync {
  if ("source" in options) return createSourceSync(options);
  checkLdapUrl(options.ldap.url);
  const mapping = { ...defaultMapping(options.usernameField), ...options.mapping };
  if (
    options.disabledAccounts !== undefined &&
    !["keep", "sync", "delete"].includes(options.disabledAccounts)
  ) {
    throw new TypeError(
      `disabledAccounts is "keep", "sync" or "delete", not ${JSON.stringify(options.disabledAccounts)}`,
    );
  }
  const sourceOptions: LdapSourceOptions = {
    ldap: options.ldap,
    baseDn: options.baseDn,
    filter: options.filter,
    mapping,
    defaultUsername: options.usernameField === undefined && options.mapping?.username === undefined,
    ...(options.disabledAccounts !== undefined && { disabledAccounts: options.disabledAccounts }),
    ...(options.attributes && { attributes: options.attributes }),
    ...(options.binaryAttributes && { binaryAttributes: options.binaryAttributes }),
    passwords: options.passwords ?? false,
    ...(options.pageSize !== undefined && { pageSize: options.pageSize }),
    contentSync: options.contentSync !== false,
  };
  const source = createLdapSource(sourceOptions);
  return createSourceSync({
    ...options,
    source: options.readInWorker ? readInWorker(source, sourceOptions) : source,
  });
}

/**
 * Refuses an LDAP URL that carries a user, a password or a query (RFC 4516's `x-bindpw`
 * extension, a token): none is used for the bind, and the URL names the directory in the state
 * file and in messages. Said once, at once, without the secret.
 */
function checkLdapUrl(url: string): void {
  const rest = url.replace(/^[a-z][a-z\d+.-]*:\/\//i, "");
  if (rest.includes("@") || /[?#]/.test(rest)) {
    throw new TypeError(
      `ldap.url must not carry a user name, a password or a query (${redactUrl(url)}): they are not used for the bind, and the URL is kept in the state file and shown in messages. Give the bind account as ldap.bindDn and ldap.password (sync --bind-dn, with --bind-password-file or $LDAP_BIND_PASSWORD), and the URL as ldap://host:port or ldaps://host:port.`,
    );
  }
}
