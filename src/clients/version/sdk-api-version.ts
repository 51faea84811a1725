import type { JsonObject, JsonValue } from "type-fest";
import * as z from "zod/mini";
import { ResponseShapeError } from "../integration-api/errors.ts";
import type { ApiResponse } from "../integration-api/http.ts";
import { isJsonObject, parseJsonBody } from "../integration-api/json-body.ts";
import { decodeBody, readFlags } from "../sdk-api/sdk-answers.ts";
import { sdkAppInfoSchema, sdkUpdateSchema, unreadTimes } from "../sdk-api/sdk-schemas.ts";
import {
  type InvalidVersionUpdate,
  type SdkCurrentVersion,
  type SdkVersionUpdate,
  toUpdateList,
  type VersionUpdateList,
} from "./read-version.ts";

/** GET /api/v1/app/info read as the running version. */
export function readSdkCurrentVersion(response: ApiResponse): SdkCurrentVersion {
  const info = decodeBody(response, sdkAppInfoSchema);
  const release = info.currentRelease;
  const { currentRelease: _, releaseSequence: __, ...rest } = z.encode(sdkAppInfoSchema, info);
  const wire = parseJsonBody(response) as { currentRelease?: unknown };
  const unread = unreadTimes(wire.currentRelease, ["createdAt", "deployedAt"]);
  return {
    version: release.versionLabel,
    ...(info.releaseSequence === undefined ? {} : { releaseSequence: info.releaseSequence }),
    releaseNotes: release.releaseNotes,
    ...(release.createdAt === undefined ? {} : { releaseDate: release.createdAt }),
    ...(release.deployedAt === undefined ? {} : { installDate: release.deployedAt }),
    extra: { ...(rest as JsonObject), ...unread },
  };
}

/**
 * GET /api/v1/app/updates: a bare array (`null` before a first fetch, `[]` in an air gap).
 * Items that cannot be read are set aside in `invalid`, as on the Integration API.
 */
export function readSdkUpdates(response: ApiResponse): {
  updates: VersionUpdateList<SdkVersionUpdate>;
  raw: JsonValue[];
} {
  const wire = response.body.trim() === "" ? null : parseJsonBody(response);
  if (wire !== null && !Array.isArray(wire)) {
    throw new ResponseShapeError(response, "expected a JSON array of updates");
  }
  const raw = wire ?? [];
  const updates: SdkVersionUpdate[] = [];
  const invalid: InvalidVersionUpdate[] = [];
  for (const [index, item] of raw.entries()) {
    const decoded = isJsonObject(item)
      ? z.safeDecode(sdkUpdateSchema, item as z.input<typeof sdkUpdateSchema>)
      : undefined;
    if (decoded === undefined || !decoded.success) {
      const problem =
        decoded === undefined
          ? "not a JSON object"
          : z.prettifyError(decoded.error).replaceAll("\n", " ");
      invalid.push({ index, problem, raw: item });
      continue;
    }
    const { versionLabel, releaseNotes, createdAt } = decoded.data;
    const unread = unreadTimes(item, ["createdAt"]);
    updates.push({
      version: versionLabel,
      releaseNotes,
      ...(createdAt === undefined ? {} : { releaseDate: createdAt }),
      ...(unread === undefined ? {} : { extra: unread }),
    });
  }
  return { updates: toUpdateList(updates, invalid, readFlags(response.headers).fromCache), raw };
}
