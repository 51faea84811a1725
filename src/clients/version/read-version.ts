import type { JsonObject, JsonValue } from "type-fest";
import type * as z from "zod/mini";
import { ResponseShapeError } from "../integration-api/errors.ts";
import type { ApiResponse } from "../integration-api/http.ts";
import { isJsonObject, parseJsonBody } from "../integration-api/json-body.ts";
import type { Timestamp } from "../integration-api/timestamp.ts";
import {
  currentVersionRecord,
  type currentVersionShape,
  versionUpdateRecord,
  type versionUpdateShape,
} from "./version-record.ts";

/**
 * The version of the application now running (GET /version/v1/current): the fields of
 * `currentVersionRecord` (version-record.ts), all required.
 */
export interface CurrentVersion extends z.output<z.ZodMiniObject<typeof currentVersionShape>> {
  /** Fields the platform sent beyond the documented ones, under their wire names. */
  extra?: JsonObject;
}

/**
 * A pending update, which `apply(update.releaseSequence)` installs. The platform documents none
 * of its fields: `releaseSequence` is always there (an item without a valid one is set aside in
 * `invalid`); the others it shares with {@link CurrentVersion} are typed when present and
 * well-formed; anything else, including a known field of an unexpected type, is kept in `extra`
 * under its wire name.
 */
export interface VersionUpdate extends z.output<z.ZodMiniObject<typeof versionUpdateShape>> {
  /** Fields the platform sent beyond the documented ones, under their wire names. */
  extra?: JsonObject;
}

/** An item of the updates list that cannot be applied: no valid `release_sequence`, or not an object. */
export interface InvalidVersionUpdate {
  /** Its position in the list the platform sent. */
  index: number;
  /** What is wrong with it. */
  problem: string;
  /** The item exactly as received. */
  raw: JsonValue;
}

/**
 * The running version as the newer in-cluster API reports it (GET /api/v1/app/info): the same
 * fields where the meaning is the same, optional where that API may not know them. The app
 * info's other fields (`instanceID`, `appSlug`, `channelName`...) are in `extra`.
 */
export interface SdkCurrentVersion {
  /** `currentRelease.versionLabel`. */
  version: string;
  /** Absent when the registry did not inject it (the service sends -1). Not an `apply()` argument there. */
  releaseSequence?: number;
  releaseNotes: string;
  /** `currentRelease.createdAt`. */
  releaseDate?: Timestamp;
  /** `currentRelease.deployedAt`: set only for Helm installs. */
  installDate?: Timestamp;
  /**
   * The app info's other fields, under their wire names, and the release's times that are not
   * RFC 3339 (`createdAt`, `deployedAt`), as the text the service sent.
   */
  extra?: JsonObject;
}

/**
 * A pending update from the newer in-cluster API (GET /api/v1/app/updates). It carries no
 * release sequence, so it cannot be passed to `apply()`: the type says so with
 * `releaseSequence?: undefined`. Install it through the admin console or `helm upgrade`.
 */
export interface SdkVersionUpdate {
  version: string;
  releaseSequence?: undefined;
  releaseNotes: string;
  /** `createdAt`. */
  releaseDate?: Timestamp;
  /** `createdAt` as the text the service sent, when it is not RFC 3339 (then no `releaseDate`). */
  extra?: JsonObject;
}

/**
 * The pending updates, in the platform's order, and beside them the items that cannot be read.
 * `Item` is {@link VersionUpdate} on the Integration API, {@link SdkVersionUpdate} on the newer one.
 */
export type VersionUpdateList<Item = VersionUpdate> = Item[] & {
  /** Items set aside, with their raw JSON: report them, they cannot be applied. */
  readonly invalid: readonly InvalidVersionUpdate[];
  /**
   * True when the newer API could not refresh the list from the vendor and served its last copy
   * (X-Replicated-Served-From-Cache); always false on the Integration API.
   */
  readonly fromCache: boolean;
};

function withExtra<T>(known: T, extra: [string, JsonValue][]): T & { extra?: JsonObject } {
  return extra.length === 0
    ? (known as T & { extra?: JsonObject })
    : { ...known, extra: Object.fromEntries(extra) };
}

/** Reads GET /version/v1/current: the five documented fields are required, others kept. */
export function readCurrentVersion(response: ApiResponse): CurrentVersion {
  const wire = parseJsonBody(response);
  if (!isJsonObject(wire)) throw new ResponseShapeError(response, "expected a JSON object");
  const { value, problems, extra } = currentVersionRecord.read(wire);
  if (problems.length > 0) {
    const absent = problems.filter((problem) => problem.absent).map(({ wireName }) => wireName);
    const invalid = problems.filter((problem) => !problem.absent).map(({ wireName }) => wireName);
    throw new ResponseShapeError(
      response,
      [
        absent.length > 0 ? `missing ${absent.join(", ")}` : "",
        invalid.length > 0 ? `malformed ${invalid.join(", ")}` : "",
      ]
        .filter(Boolean)
        .join("; "),
    );
  }
  return withExtra(value as z.output<z.ZodMiniObject<typeof currentVersionShape>>, extra);
}

/**
 * Reads GET /version/v1/updates, whose envelope is undocumented: a bare array, an object whose
 * only array (or whose `updates`, `items` or `data` array) is the list, or an empty body, null or
 * `{}` for none. Returns the updates and the raw list, whose JSON tells whether the list changed.
 */
export function readUpdates(response: ApiResponse): {
  updates: VersionUpdateList;
  raw: JsonValue[];
} {
  const wire = response.body.trim() === "" ? null : parseJsonBody(response);
  const raw = unwrapList(wire);
  if (raw === undefined) {
    throw new ResponseShapeError(response, "expected a list of updates, or an object holding one");
  }
  const updates: VersionUpdate[] = [];
  const invalid: InvalidVersionUpdate[] = [];
  for (const [index, item] of raw.entries()) {
    if (!isJsonObject(item)) {
      invalid.push({ index, problem: "not a JSON object", raw: item });
      continue;
    }
    const { value, problems, extra } = versionUpdateRecord.read(item);
    const sequence = problems.find(({ name }) => name === "releaseSequence");
    if (sequence !== undefined) {
      const problem = sequence.absent
        ? `no ${sequence.wireName}`
        : `${sequence.wireName} is not an integer`;
      invalid.push({ index, problem, raw: item });
      continue;
    }
    // A malformed optional field is left out of the update and kept, as sent, in `extra`.
    updates.push(withExtra(value as VersionUpdate, extra));
  }
  return { updates: toUpdateList(updates, invalid, false), raw };
}

function unwrapList(wire: JsonValue): JsonValue[] | undefined {
  if (wire === null) return [];
  if (Array.isArray(wire)) return wire;
  if (!isJsonObject(wire)) return undefined;
  for (const key of ["updates", "items", "data"]) {
    const value = Object.hasOwn(wire, key) ? wire[key] : undefined;
    if (Array.isArray(value)) return value;
  }
  const arrays = Object.values(wire).filter((value) => Array.isArray(value));
  if (arrays.length === 1) return arrays[0] as JsonValue[];
  return Object.keys(wire).length === 0 ? [] : undefined;
}

/** The list with its non-enumerable `invalid` and `fromCache`. */
export function toUpdateList<Item>(
  updates: Item[],
  invalid: InvalidVersionUpdate[],
  fromCache: boolean,
): VersionUpdateList<Item> {
  // Not enumerable: the list stays a plain array to iterate, compare and serialize.
  Object.defineProperty(updates, "invalid", { value: invalid });
  Object.defineProperty(updates, "fromCache", { value: fromCache });
  return updates as VersionUpdateList<Item>;
}
