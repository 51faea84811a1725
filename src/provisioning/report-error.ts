// The handler's default `onError`: one line on the logger for each answer of 500 or 503, with the
// request's secrets (the user's password, credential headers) cut out of the error's text, since a
// store's or a hook's error may quote what it was given.
import type { Logger } from "../internal/logger.ts";
import type { UserPatch } from "../users/user-record.ts";
import { headerOf } from "./headers.ts";
import type { HeaderRecord, ProvisioningErrorContext, RequestHeaders } from "./types.ts";

/** What a failing request carried that must never reach a log. */
export interface Sensitive {
  patch?: UserPatch | undefined;
  headers?: RequestHeaders | undefined;
}

const credentialHeader = /auth|token|secret|key|cookie|password/i;
const redacted = "[redacted]";

/** Logs one failure: the operation, status and uuid, and the error's name, message and stack. */
export function reportError(
  logger: Logger,
  error: unknown,
  context: ProvisioningErrorContext,
  sensitive: Sensitive = {},
): void {
  const secrets = secretsOf(sensitive);
  const clean = (text: string) => {
    let result = text;
    for (const secret of secrets) result = result.replaceAll(secret, redacted);
    return result;
  };
  const name = error instanceof Error ? error.name : typeof error;
  const message = clean(error instanceof Error ? error.message : String(error));
  const user = context.uuid === undefined ? "" : ` for user ${JSON.stringify(context.uuid)}`;
  logger.error(
    `platform-integration: ${context.operation} answered ${context.status}${user}: ${name}: ${message}`,
    {
      operation: context.operation,
      status: context.status,
      ...(context.uuid === undefined ? {} : { uuid: context.uuid }),
      error: {
        name,
        message,
        ...(error instanceof Error && error.stack ? { stack: clean(error.stack) } : {}),
      },
    },
  );
}

/** The values to cut, longest first so that a secret inside another goes with it. */
function secretsOf({ patch, headers }: Sensitive): string[] {
  const secrets: string[] = [];
  if (typeof patch?.password === "string" && patch.password !== "") secrets.push(patch.password);
  if (headers !== undefined) {
    for (const [name, value] of entriesOf(headers)) {
      if (!credentialHeader.test(name) || value === "") continue;
      secrets.push(value);
      // "Bearer abc": the token may be quoted without its scheme.
      const token = /^\S+\s+(\S.*)$/.exec(value)?.[1];
      if (token !== undefined) secrets.push(token);
    }
  }
  return secrets.sort((a, b) => b.length - a.length);
}

function entriesOf(headers: RequestHeaders): [string, string][] {
  if (headers instanceof Headers) return [...headers];
  if (Array.isArray(headers)) {
    const list = headers as readonly string[];
    const entries: [string, string][] = [];
    for (let index = 0; index + 1 < list.length; index += 2) {
      entries.push([list[index] as string, list[index + 1] as string]);
    }
    return entries;
  }
  return Object.keys(headers as HeaderRecord).flatMap((name) => {
    const value = headerOf(headers as HeaderRecord, name);
    return value === undefined ? [] : [[name, value] as [string, string]];
  });
}
