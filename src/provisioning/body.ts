// Reading a create or modify body: its size, its bytes as JSON whatever the content type says,
// and the patches it carries.

import type { Logger } from "../internal/logger.ts";
import type { UserPatch } from "../users/user-record.ts";
import { errorResponse, ProvisioningError } from "./errors.ts";
import type { ProvisioningHandlerOptions } from "./handler-options.ts";
import { payloadTooLarge, withinBodyLimit } from "./http/body-limit.ts";
import type { BodySeen } from "./observe.ts";
import { bodyReadInFront, type ProvisioningRequest, type ProvisioningResponse } from "./types.ts";
import {
  parseKeepingNumbers,
  reparseKeepingNumbers,
  toPatches,
  UnreadableParsedBody,
} from "./wire.ts";

const emptyBody = errorResponse("invalid_json", "The body is empty: send a JSON user record");
const invalidJson = errorResponse("invalid_json", "The body is not valid JSON in UTF-8");
const decoder = new TextDecoder("utf-8", { fatal: true });

const streamRead = new UnreadableParsedBody(
  "it read the body and left nothing parsed, so the body is gone",
);

/**
 * The patches a create or modify body carries, or the answer that refuses it. The body is read as
 * JSON whatever its Content-Type says: the spec names none, and `text/plain` (what `fetch` sends
 * for a string), curl's form type or none at all must not stall a sync. (Browsers, which could
 * post such bodies across sites, are refused before this.) `seen`, when given, receives the JSON
 * parsed from the bytes.
 */
export function readPatches(
  request: ProvisioningRequest,
  bodyLimit: number,
  seen?: BodySeen,
): UserPatch[] | ProvisioningResponse | UnreadableParsedBody {
  // The edges read at most the limit; an adapter's own reading or a framework's parser may not.
  if (!withinBodyLimit(request, bodyLimit)) return payloadTooLarge;
  let patches: ReturnType<typeof toPatches>;
  if (request.json !== undefined) {
    if (request.json === bodyReadInFront) return streamRead;
    patches = toPatches(request.json, "parsed", true);
  } else {
    const bytes = request.body;
    if (bytes === undefined || bytes.byteLength === 0) return emptyBody;
    let text: string;
    let body: unknown;
    try {
      text = decoder.decode(bytes);
      body = JSON.parse(text);
    } catch {
      return invalidJson;
    }
    seen?.(body);
    // Only an escape can put a lone surrogate or U+0000 into a string parsed from valid UTF-8.
    const checkStrings = text.includes("\\u");
    patches = toPatches(body, "plain", checkStrings);
    if (patches === reparseKeepingNumbers) {
      const revived = parseKeepingNumbers(text);
      patches = toPatches(
        revived ?? body,
        revived === undefined ? "lost" : "revived",
        checkStrings,
      );
    }
  }
  if (patches instanceof ProvisioningError) return errorResponse(patches.code, patches.message);
  // A "lost", "revived" or "parsed" body never asks for another parse.
  return patches as UserPatch[] | UnreadableParsedBody;
}

/**
 * The answer to a body a parser in front made unreadable: 500, since the platform's message is
 * valid as sent and a 400 would stall the sync on it for good. The log line that says how to fix
 * it is written once per handler; `onError`, when set, receives every occurrence.
 */
export function createParserInFrontReport(
  logger: Logger,
  onError: ProvisioningHandlerOptions["onError"],
): (unreadable: UnreadableParsedBody, operation: "create" | "modify") => ProvisioningResponse {
  let logged = false;
  return (unreadable, operation) => {
    const message = `platform-integration: ${operation} answered 500: a body parser in front of the Provisioning API read this request's body before it, and ${unreadable.reason}. Mount the Provisioning API before that parser (Express: app.use(path, toNodeHandler(handler)) before express.json() and express.urlencoded(); Koa: toKoaMiddleware(handler) before the body parser), so that it reads the body as the platform sent it; until then every such message answers 500 and the platform sends it again. (Logged once.)`;
    if (!logged) {
      logged = true;
      logger.error(message, { operation, status: 500 });
    }
    try {
      onError?.(new Error(message), { operation, uuid: undefined, status: 500 });
    } catch {
      // onError failing must not turn the answer into a rejection; the line above was logged.
    }
    return parserInFront;
  };
}

const parserInFront = errorResponse(
  "internal_error",
  "A body parser in front of the Provisioning API changed this body, and nothing was stored: the application must mount the Provisioning API before its body parsers",
);
