// The LDAP source's one connection: opened on use, StartTLS and bound, the root DSE read once (it
// tells Active Directory, which decides the reads), and reopened after a failure; what connecting
// needs from the caller (LdapConnectionOptions) and how its failures are told (ldap-errors.ts).
import type { ConnectionOptions } from "node:tls";
import type { Client } from "ldapts";
import { redactUrl } from "../internal/url.ts";
import { DirectoryError } from "../sync/source.ts";
import {
  type ReadOptions,
  type ReadPlan,
  readPlan,
  rootDseAttributes,
  type ServerProfile,
  serverProfile,
} from "./active-directory.ts";
import { toDirectoryError } from "./ldap-errors.ts";
import { toLdapEntry } from "./mapping.ts";

/** How to reach and authenticate to the directory. */
export interface LdapConnectionOptions {
  /** `ldap://host:389` or `ldaps://host:636`. */
  url: string;
  /** The DN of the account that reads the users; anonymous when absent. */
  bindDn?: string;
  /** Its password. Never logged, never put in an error message. */
  password?: string;
  /**
   * TLS options for `ldaps://` (and `startTls`): `{ ca }` to trust a private CA. Certificates are
   * checked by default; turning that off (`rejectUnauthorized: false`) is your explicit choice.
   */
  tls?: ConnectionOptions;
  /** Upgrades an `ldap://` connection with StartTLS before binding. */
  startTls?: boolean;
  /** How long one LDAP operation may take (default 60 s). */
  timeoutMs?: number;
}

/** A connection that the source and its change feeds share. */
export interface LdapConnection {
  /** The bound connection, opened (again) when there is none. */
  connect(): Promise<Client>;
  /** Drops the connection: one that failed mid-search is not reused. */
  disconnect(): Promise<void>;
  /** Makes an error of the connection what the source throws for it. */
  failure(error: unknown): DirectoryError;
  /** What the root DSE said, once a connection succeeded. */
  readonly profile: ServerProfile | undefined;
  /** The reads that follow from it, once a connection succeeded. */
  readonly plan: ReadPlan | undefined;
}

/** Opens no connection yet: the first {@link LdapConnection.connect} does. */
export function createLdapConnection(
  ldap: LdapConnectionOptions,
  filter: string,
  readOptions: ReadOptions,
): LdapConnection {
  if (ldap.startTls && /^ldaps:/i.test(ldap.url)) {
    throw new TypeError(
      `startTls upgrades an ldap:// connection; ${redactUrl(ldap.url)} is already LDAPS`,
    );
  }
  let client: Client | undefined;
  let profile: ServerProfile | undefined;
  let plan: ReadPlan | undefined;
  // Whether a connection ever succeeded: a TLS handshake the server breaks off on the first one
  // is the configuration (a plain port for ldaps://), later it may be a restart.
  let connectedOnce = false;

  const connect = async (): Promise<Client> => {
    if (client?.isConnected && client.isBound) return client;
    await client?.unbind().catch(() => undefined);
    client = undefined;
    const ldapts = await loadLdapts();
    try {
      ldapts.FilterParser.parseString(filter);
    } catch (error) {
      throw new DirectoryError(`The filter ${filter} is invalid: ${(error as Error).message}`, {
        fatal: true,
        cause: error,
      });
    }
    // ldapts opens a TLS connection whenever it is given TLS options, whatever the URL: with
    // StartTLS they go to startTLS(), over the plain connection, and never to the constructor.
    const fresh = new ldapts.Client({
      url: ldap.url,
      timeout: ldap.timeoutMs ?? 60_000,
      connectTimeout: ldap.timeoutMs ?? 60_000,
      ...(ldap.tls && !ldap.startTls && { tlsOptions: ldap.tls }),
    });
    try {
      if (ldap.startTls) await startTls(fresh, ldap);
      if (ldap.bindDn !== undefined) await fresh.bind(ldap.bindDn, ldap.password ?? "");
      if (profile === undefined) {
        const { searchEntries } = await fresh.search("", {
          scope: "base",
          filter: "(objectClass=*)",
          attributes: [...rootDseAttributes],
        });
        profile = serverProfile(searchEntries[0] && toLdapEntry(searchEntries[0]));
        plan = readPlan(readOptions, profile);
      }
    } catch (error) {
      await fresh.unbind().catch(() => undefined);
      throw error;
    }
    connectedOnce = true;
    client = fresh;
    return fresh;
  };

  return {
    connect,
    async disconnect() {
      await client?.unbind().catch(() => undefined);
      client = undefined;
    },
    failure: (error) => toDirectoryError(error, ldap, connectedOnce),
    get profile() {
      return profile;
    },
    get plan() {
      return plan;
    },
  };
}

/** ldapts, an optional peer dependency: its absence is a fatal error with its fix. */
async function loadLdapts(): Promise<typeof import("ldapts")> {
  try {
    return await import("ldapts");
  } catch (error) {
    throw new DirectoryError(
      "The LDAP client is missing: install it next to platform-integration (npm install ldapts)",
      { fatal: true, cause: error },
    );
  }
}

/** Upgrades the connection; a server that refuses the StartTLS operation is a fatal error. */
async function startTls(client: Client, { url, tls }: LdapConnectionOptions): Promise<void> {
  try {
    // startTLS() writes the socket into the options it is given: a copy each time.
    await client.startTLS({ ...tls });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code !== "number") throw error;
    throw new DirectoryError(
      `LDAP ${redactUrl(url)}: the server refused StartTLS (${(error as Error).message}): give it a certificate ` +
        "(OpenLDAP: TLSCertificateFile and TLSCertificateKeyFile), or use ldaps://",
      { fatal: true, cause: error },
    );
  }
}
