import * as z from "zod/mini";
import { Timestamp } from "../integration-api/timestamp.ts";

// One zod schema per record of the newer in-cluster API (and of the admin console's
// compatibility license endpoint): the record's type, its decoding in the clients and its
// encoding in the fakes. The wire names are the service's own camelCase; the clients map them
// to the SDK's names in one small function each.

/** Go's zero time, which the service sends for a time it never set. */
const goZeroTime = /^0001-01-01T00:00:00(\.0+)?(Z|[+-]00:00)$/;

/**
 * A time the service treats as opaque text (a release's or a status's): `""` and Go's zero time
 * (`0001-01-01T00:00:00Z`) read as absent, and so does text that is not RFC 3339, rather than
 * failing the whole answer: the records keep that text in `extra` ({@link unreadTimes}).
 */
/**
 * A time as the service serves it, read by the one rule of the newer API: `""` and Go's zero time
 * are absent, and so is text that is not RFC 3339 (the service treats times as opaque text; the
 * reader keeps such text elsewhere, {@link unreadTimes}).
 */
export function readReleaseTime(text: string): Timestamp | undefined {
  if (text === "" || goZeroTime.test(text)) return undefined;
  try {
    return Timestamp.parse(text);
  } catch {
    return undefined;
  }
}

const releaseTime = z.codec(
  z.string(),
  z.optional(z.custom<Timestamp>((value) => value instanceof Timestamp)),
  {
    decode: (text) => readReleaseTime(text),
    encode: (value) => value?.text ?? "",
  },
);

/**
 * The times among `names` of a raw wire object that {@link releaseTime} reads as absent though
 * the service sent text (not `""`, not Go's zero time): kept as that text, under their wire
 * names, for the record's `extra`; undefined when there is none.
 */
export function unreadTimes(
  raw: unknown,
  names: readonly string[],
): Record<string, string> | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const kept: Record<string, string> = {};
  for (const name of names) {
    const text = (raw as Record<string, unknown>)[name];
    if (typeof text !== "string" || text === "" || goZeroTime.test(text)) continue;
    try {
      Timestamp.parse(text);
    } catch {
      kept[name] = text;
    }
  }
  return Object.keys(kept).length === 0 ? undefined : kept;
}

/** A sequence the service sends as -1 when the registry did not inject it. */
const sequence = z.codec(z.int(), z.optional(z.int()), {
  decode: (value) => (value < 0 ? undefined : value),
  encode: (value) => value ?? -1,
});

const text = z._default(z.string(), "");

/** `Release`: `currentRelease` of the app info, an item of the history. */
export const sdkReleaseSchema = z.object({
  versionLabel: z.string(),
  releaseNotes: text,
  createdAt: z.optional(releaseTime),
  deployedAt: z.optional(releaseTime),
  helmReleaseName: z.optional(z.string()),
  helmReleaseRevision: z.optional(z.int()),
  helmReleaseNamespace: z.optional(z.string()),
});
export type SdkRelease = z.output<typeof sdkReleaseSchema>;

/** GET /api/v1/app/info. */
export const sdkAppInfoSchema = z.object({
  instanceID: text,
  appSlug: text,
  appName: text,
  appStatus: text,
  helmChartURL: z.optional(z.string()),
  currentRelease: sdkReleaseSchema,
  channelID: text,
  channelName: text,
  channelSequence: z.optional(sequence),
  releaseSequence: z.optional(sequence),
});
export type SdkAppInfo = z.output<typeof sdkAppInfoSchema>;

/** An item of GET /api/v1/app/updates: no sequence, channel or required flag. */
export const sdkUpdateSchema = z.object({
  versionLabel: z.string(),
  createdAt: z.optional(releaseTime),
  releaseNotes: text,
});
export type SdkUpdate = z.output<typeof sdkUpdateSchema>;

/** GET /api/v1/app/updates: a bare array, newest first (`null` before a first fetch). */
export const sdkUpdatesSchema = z.nullable(z.array(sdkUpdateSchema));

/** One Kubernetes resource of the app status. */
export const sdkResourceStateSchema = z.object({
  kind: z.string(),
  name: z.string(),
  namespace: text,
  state: z.string(),
});

/** GET /api/v1/app/status. */
export const sdkAppStatusSchema = z.object({
  appStatus: z.object({
    appSlug: text,
    resourceStates: z._default(z.nullable(z.array(sdkResourceStateSchema)), null),
    updatedAt: z.optional(releaseTime),
    state: text,
    sequence: z._default(z.int(), 0),
  }),
});
export type SdkAppStatus = z.output<typeof sdkAppStatusSchema>;

/** GET /api/v1/app/history: newest Helm revision first. */
export const sdkHistorySchema = z.object({
  releases: z._default(z.nullable(z.array(sdkReleaseSchema)), null),
});

/**
 * A release of integration mode's mock data: a `Release` with its channel and sequences. The
 * service writes every key; its dates are text it keeps as given.
 */
export const sdkMockReleaseSchema = z.object({
  versionLabel: text,
  releaseNotes: text,
  createdAt: text,
  deployedAt: text,
  helmReleaseName: text,
  helmReleaseRevision: z._default(z.int(), 0),
  helmReleaseNamespace: text,
  channelID: text,
  channelName: text,
  channelSequence: z._default(z.int(), 0),
  releaseSequence: z._default(z.int(), 0),
});
export type SdkMockRelease = z.output<typeof sdkMockReleaseSchema>;

/** v2 mock data's `appStatus`: the status object of GET /api/v1/app/status. */
export const sdkMockAppStatusSchema = z.object({
  appSlug: text,
  resourceStates: z._default(z.nullable(z.array(sdkResourceStateSchema)), null),
  /** Go's zero time (`0001-01-01T00:00:00Z`) when the data gives none. */
  updatedAt: text,
  state: text,
  sequence: z._default(z.int(), 0),
});

/**
 * GET|POST /api/v1/integration/mock-data: a development license's integration-mode data. `v1`
 * (or no version) has a status string and no status endpoint (500); `v2` a status object.
 */
export const sdkMockDataSchema = z.object({
  version: z.optional(z.enum(["v1", "v2"])),
  appStatus: z.optional(z.union([z.string(), sdkMockAppStatusSchema])),
  helmChartURL: z.optional(z.string()),
  currentRelease: z.optional(sdkMockReleaseSchema),
  deployedReleases: z.optional(z.nullable(z.array(sdkMockReleaseSchema))),
  availableReleases: z.optional(z.nullable(z.array(sdkMockReleaseSchema))),
});
export type SdkMockData = z.output<typeof sdkMockDataSchema>;

/** GET /api/v1/integration/status (a development license only: 403 otherwise). */
export const sdkIntegrationStatusSchema = z.object({ isEnabled: z.boolean() });

/** POST /api/v1/supportbundle: 201. */
export const sdkSupportBundleSchema = z.object({ bundleId: z.string(), slug: z.string() });

/** The body of a 422 in read-only mode. */
export const sdkReadOnlySchema = z.object({
  error: text,
  readOnlyMode: z.literal(true),
});
