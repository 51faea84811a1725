// The sync command's command line: the options it takes, each checked (a mistake is a
// UsageError that names the option), and the createDirectorySync options they make. Reading the
// files it names (the bind password, the CAs) is part of it; running the sync is sync.ts's.
import { readFileSync } from "node:fs";
import { pemCertificates } from "../../internal/pem.ts";
import { redactUrl } from "../../internal/url.ts";
import type { DisabledAccounts } from "../../ldap/active-directory.ts";
import type { LdapSyncOptions } from "../../ldap/create-directory-sync.ts";
import { integerOption, parseTargetCommandLine } from "../args.ts";
import { type CommandIo, UsageError } from "../command.ts";

/** Where the bind password comes from when no file is named: never from argv. */
export const bindPasswordVariable = "LDAP_BIND_PASSWORD";

/**
 * The sync command's arguments, checked: the values, what the run needs besides the sync
 * (`ldapUrl`, `baseDn`, `target`, `intervalMs`, `statePath`, `readUser`), and `settings`, the
 * options of createDirectorySync but for its progress callback and its read worker.
 */
export function parseSyncCommandLine(args: string[], io: CommandIo) {
  const {
    values,
    url: target,
    timeoutMs,
    readUser,
  } = parseTargetCommandLine(
    args,
    {
      "ldap-url": { type: "string" },
      "bind-dn": { type: "string" },
      "bind-password-file": { type: "string" },
      "base-dn": { type: "string" },
      filter: { type: "string" },
      "username-field": { type: "string" },
      "disabled-accounts": { type: "string" },
      "user-id-field": { type: "string" },
      "uuid-field": { type: "string" },
      "binary-attributes": { type: "string" },
      "max-deletes": { type: "string" },
      "max-delete-percent": { type: "string" },
      "allow-deletes": { type: "string" },
      "allow-delete-all": { type: "boolean" },
      "delete-window": { type: "string" },
      passwords: { type: "boolean" },
      "ldap-ca": { type: "string" },
      "target-ca": { type: "string" },
      "start-tls": { type: "boolean" },
      state: { type: "string" },
      interval: { type: "string" },
      once: { type: "boolean" },
      full: { type: "boolean" },
      "reset-request": { type: "boolean" },
      "no-content-sync": { type: "boolean" },
      "page-size": { type: "string" },
      json: { type: "boolean" },
    },
    { defaultTimeoutMs: 30_000 },
  );
  const ldapUrl = required(values["ldap-url"], "ldap-url");
  if (!/^ldaps?:\/\//i.test(ldapUrl)) {
    throw new UsageError(
      `--ldap-url takes an ldap:// or ldaps:// URL, not "${redactUrl(ldapUrl)}"`,
    );
  }
  const baseDn = required(values["base-dn"], "base-dn");
  if (values.once && values.interval !== undefined) {
    throw new UsageError("--once and --interval exclude each other");
  }
  const intervalMs = parseDuration(values.interval ?? "60s");
  const pageSize =
    values["page-size"] === undefined
      ? undefined
      : integerOption(values["page-size"], "page-size", { min: 1, max: 100_000 });
  const count = (name: "max-deletes" | "max-delete-percent" | "allow-deletes", max: number) =>
    values[name] === undefined ? undefined : integerOption(values[name], name, { min: 0, max });
  const maxDeletes = count("max-deletes", 1_000_000_000);
  const maxPercent = count("max-delete-percent", 100);
  const allowDeletes = count("allow-deletes", 1_000_000_000);
  const windowText = values["delete-window"];
  const windowMs =
    windowText === undefined
      ? undefined
      : windowText.trim() === "0"
        ? 0
        : /^\s*\d+(?:\.\d+)?\s*$/.test(windowText)
          ? refuse(
              `--delete-window takes a time with its unit, such as 24h or 90m (a bare number could be seconds or hours), or 0; not "${windowText}"`,
            )
          : parseDuration(windowText, "--delete-window");
  const mapping = {
    ...(values["user-id-field"] !== undefined && { userId: values["user-id-field"] }),
    ...(values["uuid-field"] !== undefined && { uuid: values["uuid-field"] }),
  };
  const binaryAttributes = values["binary-attributes"]
    ?.split(",")
    .map((name) => name.trim())
    .filter(Boolean);
  const password = bindPassword(values["bind-password-file"], io);
  const bindDn = values["bind-dn"];
  const ca = values["ldap-ca"];
  const targetCa = values["target-ca"];
  const targetTls = targetCa === undefined ? undefined : { ca: readPem(targetCa, "--target-ca") };
  const statePath = values.state ?? "directory-sync.sqlite";
  const settings: LdapSyncOptions = {
    ldap: {
      url: ldapUrl,
      ...(bindDn !== undefined && { bindDn }),
      ...(password !== undefined && { password }),
      ...(ca !== undefined && { tls: { ca: readFile(ca, "--ldap-ca") } }),
      ...(values["start-tls"] && { startTls: true }),
    },
    baseDn,
    ...(values.filter !== undefined && { filter: values.filter }),
    ...(values["username-field"] !== undefined && { usernameField: values["username-field"] }),
    ...(values["disabled-accounts"] !== undefined && {
      disabledAccounts: values["disabled-accounts"] as DisabledAccounts,
    }),
    ...(Object.keys(mapping).length > 0 && { mapping }),
    ...(binaryAttributes && { binaryAttributes }),
    ...((maxDeletes !== undefined || maxPercent !== undefined || windowMs !== undefined) && {
      deleteGuard: {
        ...(maxDeletes !== undefined && { maxDeletes }),
        ...(maxPercent !== undefined && { maxPercent }),
        ...(windowMs !== undefined && { windowMs }),
      },
    }),
    ...(allowDeletes !== undefined && { allowDeletes }),
    ...(values["allow-delete-all"] && { allowDeleteAll: true }),
    ...(values.passwords && { passwords: true }),
    ...(pageSize !== undefined && { pageSize }),
    target,
    ...(targetTls && { targetTls }),
    state: statePath,
    ...(values["reset-request"] && { resetRequest: true }),
    ...(values.full && { adoptState: true }),
    ...(values["no-content-sync"] && { contentSync: false }),
    timeoutMs,
  };
  return { values, ldapUrl, baseDn, target, timeoutMs, readUser, intervalMs, statePath, settings };
}

function refuse(message: string): never {
  throw new UsageError(message);
}

function required(value: string | undefined, name: string): string {
  if (value === undefined || value === "") throw new UsageError(`Missing --${name}`);
  return value;
}

/** "60s", "5m", "1h", "500ms", or a bare number of seconds, in milliseconds. */
export function parseDuration(text: string, option = "--interval"): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  const units = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;
  const value = match ? Number(match[1]) * units[(match[2] ?? "s") as keyof typeof units] : 0;
  if (!(value >= 1)) {
    throw new UsageError(`${option} takes a time such as 60s, 5m or 1h, not "${text}"`);
  }
  return Math.round(value);
}

function bindPassword(file: string | undefined, io: CommandIo): string | undefined {
  if (file !== undefined) return readFile(file, "--bind-password-file").replace(/\r?\n$/, "");
  return io.env[bindPasswordVariable];
}

function readFile(path: string, option: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    const reason = (error as { code?: string }).code ?? String(error);
    throw new UsageError(`${option}: cannot read ${path} (${reason})`);
  }
}

/** The PEM certificates in a file, checked as the library checks them. */
function readPem(path: string, option: string): string[] {
  return asUsageError(() => pemCertificates(readFile(path, option), `${option} ${path}`));
}

/** `make()`, with an option the library refuses (a TypeError) told as a command-line mistake. */
export function asUsageError<T>(make: () => T): T {
  try {
    return make();
  } catch (error) {
    if (error instanceof TypeError) throw new UsageError(error.message);
    throw error;
  }
}
