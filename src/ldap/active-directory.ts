import type { DirectoryPage } from "../sync/source.ts";
import {
  attributesToRequest,
  type DirectoryMapping,
  type LdapEntry,
  mapEntry,
  uuidAttributesToRequest,
} from "./mapping.ts";

// Active Directory, told by its root DSE, and what the sync reads there by default: person user
// accounts (not computers, which are `user` objects too, nor contacts), the domain's own system
// accounts left out, disabled accounts as the caller chooses.

/** Which entries are users when no filter is given, on any server but Active Directory. */
export const defaultFilter = "(objectClass=person)";

/** LDAP_CAP_ACTIVE_DIRECTORY_OID: listed in supportedCapabilities by AD DS and Samba's AD DC only. */
export const activeDirectoryCapability = "1.2.840.113556.1.4.800";

/** What the sync reads on Active Directory when no filter is given: person user accounts. */
export const activeDirectoryUserFilter = "(&(objectCategory=person)(objectClass=user))";

/** The attribute that gives the username on Active Directory when none is named. */
export const activeDirectoryUsername = "sAMAccountName";

/**
 * What a disabled Active Directory account (userAccountControl with ACCOUNTDISABLE, 0x2)
 * becomes: `"keep"` (the default) sends nothing for it, so that the application keeps what it
 * holds, as it was last acknowledged, and gets no new user for it; `"sync"` treats it as any
 * user; `"delete"` treats it as gone from the directory (a delete for a user the application
 * holds; a create again once it is enabled).
 */
export type DisabledAccounts = "keep" | "sync" | "delete";

/** The root DSE attributes the sync reads to tell what the server is and offers. */
export const rootDseAttributes = [
  "supportedCapabilities",
  "supportedControl",
  "defaultNamingContext",
  "dsServiceName",
] as const;

/** What a server's root DSE says about it. */
export interface ServerProfile {
  activeDirectory: boolean;
  controls: readonly string[];
  /** The domain's naming context (AD): where DirSync searches. */
  namingContext?: string;
  /** The DN of the domain controller's NTDS Settings object (AD): where its invocationId is. */
  dsServiceName?: string;
}

/** The {@link ServerProfile} of a root DSE entry as ldapts returns it. */
export function serverProfile(rootDse: LdapEntry | undefined): ServerProfile {
  const capabilities = rootDse?.values("supportedCapabilities") ?? [];
  const namingContext = rootDse?.first("defaultNamingContext");
  const dsServiceName = rootDse?.first("dsServiceName");
  return {
    activeDirectory: capabilities.includes(activeDirectoryCapability),
    controls: rootDse?.values("supportedControl") ?? [],
    ...(namingContext !== undefined && { namingContext }),
    ...(dsServiceName !== undefined && { dsServiceName }),
  };
}

/** The attributes {@link accountKind} reads. */
export const accountAttributes = ["userAccountControl", "isCriticalSystemObject"] as const;

const accountDisable = 0x2;

/**
 * How the sync treats an Active Directory entry: a `system` account is the domain's own
 * (Administrator, Guest, krbtgt, the DNS service account: isCriticalSystemObject), a `disabled`
 * one has ACCOUNTDISABLE in userAccountControl; any other is a `user`.
 */
export function accountKind(entry: LdapEntry): "user" | "disabled" | "system" {
  if (entry.first("isCriticalSystemObject")?.toUpperCase() === "TRUE") return "system";
  const control = Number(entry.first("userAccountControl"));
  return Number.isInteger(control) && (control & accountDisable) !== 0 ? "disabled" : "user";
}

/** What a read asks for and how it maps, once the server is known. */
export interface ReadPlan {
  filter: string;
  mapping: DirectoryMapping;
  attributes: string[];
  /** What the read that finds deletions asks for. */
  uuidAttributes: string[];
  /** Set on Active Directory: how its accounts are told apart. */
  ad?: { disabledAccounts: DisabledAccounts; leaveSystemOut: boolean };
}

/** The source options a {@link ReadPlan} follows. */
export interface ReadOptions {
  filter?: string | undefined;
  mapping: DirectoryMapping;
  defaultUsername?: boolean;
  disabledAccounts?: DisabledAccounts;
  attributes?: readonly string[];
  passwords: boolean;
}

/** The reads of `options` on a server of `profile`. */
export function readPlan(options: ReadOptions, profile: ServerProfile): ReadPlan {
  const mapping =
    profile.activeDirectory && options.defaultUsername
      ? { ...options.mapping, username: activeDirectoryUsername }
      : options.mapping;
  const attributes = attributesToRequest(mapping, {
    ...(options.attributes && { extra: options.attributes }),
    passwords: options.passwords,
  });
  const uuidAttributes = uuidAttributesToRequest(mapping, attributes);
  if (!profile.activeDirectory) {
    return { filter: options.filter ?? defaultFilter, mapping, attributes, uuidAttributes };
  }
  // On AD, the uuids read also tells disabled and system accounts apart.
  const withAccounts = (names: string[]) => [...new Set([...names, ...accountAttributes])];
  return {
    filter: options.filter ?? activeDirectoryUserFilter,
    mapping,
    attributes: withAccounts(attributes),
    uuidAttributes: withAccounts(uuidAttributes),
    ad: {
      disabledAccounts: options.disabledAccounts ?? "keep",
      // A filter of the caller's says which entries are users; the default leaves these out.
      leaveSystemOut: options.filter === undefined,
    },
  };
}

/**
 * Adds what an entry is to `page`: a user, a skipped entry (no uuid; on AD, no username), or,
 * on Active Directory, a count only. A disabled account kept (`"keep"`) is seen by the read
 * that finds deletions (`uuidsOnly`), so that it is not deleted, and not by the read that
 * creates and modifies; the counts are of the latter.
 */
export function addEntry(
  entry: LdapEntry,
  plan: ReadPlan,
  { uuidsOnly, passwords }: { uuidsOnly: boolean; passwords: boolean },
  page: DirectoryPage,
): void {
  const { ad } = plan;
  if (ad) {
    const kind = accountKind(entry);
    if (kind === "system" && ad.leaveSystemOut) {
      if (!uuidsOnly) page.nonUsers = (page.nonUsers ?? 0) + 1;
      return;
    }
    if (kind === "disabled") {
      if (!uuidsOnly) page.disabled = (page.disabled ?? 0) + 1;
      const read = ad.disabledAccounts === "sync" || (ad.disabledAccounts === "keep" && uuidsOnly);
      if (!read) return;
    }
  }
  const user = mapEntry(entry, plan.mapping, {
    passwords: passwords && !uuidsOnly,
    uuidOnly: uuidsOnly,
  });
  if ("skipped" in user) page.skipped.push({ dn: entry.dn, reason: user.skipped });
  else if (ad && !uuidsOnly && user.username === undefined) {
    page.skipped.push({ dn: entry.dn, reason: "it has no username" });
  } else page.users.push(user);
}
