// Reading a create or modify body: its size, its bytes as JSON whatever the content type says,
// and the patches it carries.
import { declaresMoreThan } from "../internal/body-limit.ts";
import { errorResponse, ProvisioningError, payloadTooLarge } from "./errors.ts";
import { headerOf } from "./headers.ts";
import type { ProvisioningRequest, ProvisioningResponse } from "./types.ts";
import type { UserPatch } from "./user-record.ts";
import { parseKeepingNumbers, reparseKeepingNumbers, toPatches } from "./wire.ts";

const emptyBody = errorResponse("invalid_json", "The body is empty: send a JSON user record");
const invalidJson = errorResponse("invalid_json", "The body is not valid JSON in UTF-8");
const decoder = new TextDecoder("utf-8", { fatal: true });

/**
 * The patches a create or modify body carries, or the answer that refuses it. The body is read as
 * JSON whatever its Content-Type says: the spec names none, and `text/plain` (what `fetch` sends
 * for a string), curl's form type or none at all must not stall a sync. (Browsers, which could
 * post such bodies across sites, are refused before this.)
 */
export function readPatches(
  request: ProvisioningRequest,
  bodyLimit: number,
): UserPatch[] | ProvisioningResponse {
  let patches: ReturnType<typeof toPatches>;
  if (request.json !== undefined) {
    // A framework's parser may have had a looser limit than this handler's.
    if (declaresMoreThan(headerOf(request.headers, "content-length"), bodyLimit)) {
      return payloadTooLarge;
    }
    patches = toPatches(request.json, "lost", true);
  } else {
    const bytes = request.body;
    if (bytes === undefined || bytes.byteLength === 0) return emptyBody;
    if (bytes.byteLength > bodyLimit) return payloadTooLarge;
    let text: string;
    let body: unknown;
    try {
      text = decoder.decode(bytes);
      body = JSON.parse(text);
    } catch {
      return invalidJson;
    }
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
  // A "lost" or "revived" body never asks for another parse.
  return patches as UserPatch[];
}
