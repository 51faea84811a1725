// The Version API's fake: its routes and state, each answer encoded by the record the client
// decodes it with (version-record.ts).

import { type FakeRoute, json, jsonError } from "../integration-api/fake-answers.ts";
import { currentVersionRecord, versionUpdateRecord } from "./version-record.ts";

/**
 * The running release as the fake's Version API reports it: the client's `CurrentVersion` with
 * its dates as the text served verbatim (the platform's format is ISO 8601 UTC with seven
 * fractional digits). Both come from one schema, `currentVersionRecord`, which also gives the
 * wire names: `{ version, release_sequence, release_notes, release_date, install_date }`.
 */
export interface FakeCurrentVersion {
  version: string;
  releaseSequence: number;
  releaseNotes: string;
  releaseDate: string;
  installDate: string;
}

/** A pending update: the current-version record without `installDate`. */
export type FakeUpdate = Omit<FakeCurrentVersion, "installDate">;

/**
 * What `setCurrent()` of the fake Integration API accepts. Omitted notes are empty, omitted dates are
 * "now"; a `Date` is written in the platform's format, a string is served as given (to test how a
 * client copes with an odd value).
 */
export interface FakeCurrentVersionInit {
  version: string;
  releaseSequence: number;
  releaseNotes?: string;
  releaseDate?: string | Date;
  installDate?: string | Date;
}

/** What `setUpdates()` accepts for each pending update. */
export type FakeUpdateInit = Omit<FakeCurrentVersionInit, "installDate">;

/** The fake Version API's starting state and hooks, part of `FakeIntegrationApiOptions`. */
export interface FakeVersionOptions {
  /** The running release (default: version "1.0.0", release sequence 1). */
  current?: FakeCurrentVersionInit;
  /** Pending updates (default: none). */
  updates?: readonly FakeUpdateInit[];
  /** The clock for default dates and for `installDate` when an update is applied. */
  now?: () => Date;
  /** Called with the new current version whenever an update is applied. */
  onUpdateApplied?: (current: FakeCurrentVersion) => void;
}

/** The fake Version API's state, spread into the fake Integration API. */
export interface FakeVersionApi {
  readonly current: FakeCurrentVersion;
  readonly updates: readonly FakeUpdate[];
  setCurrent(current: FakeCurrentVersionInit): void;
  setUpdates(updates: readonly FakeUpdateInit[]): void;
  apply(sequence: number): FakeCurrentVersion;
}

/**
 * The Version API (spec section 4.2): `GET /version/v1/current`, `GET /version/v1/updates` (a
 * bare JSON array, by ascending release sequence) and `PUT /version/v1/:sequence` (`204`; `400`
 * for a sequence that is not an integer, `404` for one that is not pending), with timestamps of
 * seven fractional digits.
 */
export function createFakeVersion(options: FakeVersionOptions): {
  api: FakeVersionApi;
  routes: FakeRoute[];
  reset(): void;
} {
  const now = options.now ?? (() => new Date());
  const initialCurrent = toCurrentVersion(
    options.current ?? { version: "1.0.0", releaseSequence: 1 },
    now(),
  );
  const initialUpdates = toUpdates(options.updates ?? [], now());
  let current = initialCurrent;
  let updates = initialUpdates;

  const applyUpdate = (sequence: number): FakeCurrentVersion => {
    const update = updates.find((candidate) => candidate.releaseSequence === sequence);
    if (update === undefined) {
      const pending = updates.map((candidate) => candidate.releaseSequence).join(", ") || "none";
      throw new Error(
        `No pending update has release sequence ${sequence} (pending sequences: ${pending}).`,
      );
    }
    current = { ...update, installDate: formatTimestamp(now()) };
    updates = updates.filter((candidate) => candidate.releaseSequence > sequence);
    options.onUpdateApplied?.({ ...current });
    return { ...current };
  };

  const routes: FakeRoute[] = [
    {
      method: "GET",
      path: "/version/v1/current",
      answer: () => json(200, currentVersionRecord.toWire(current)),
    },
    {
      method: "GET",
      path: "/version/v1/updates",
      answer: () =>
        json(
          200,
          updates.map((update) => versionUpdateRecord.toWire(update)),
        ),
    },
    {
      method: "PUT",
      path: "/version/v1/:sequence",
      answer: (_request, segment) => {
        const sequence = /^\d+$/.test(segment) ? Number(segment) : Number.NaN;
        if (!Number.isSafeInteger(sequence)) {
          return jsonError(
            400,
            "invalid_sequence",
            "The path must end with the release sequence of a pending update, an integer.",
          );
        }
        if (!updates.some((update) => update.releaseSequence === sequence)) {
          return jsonError(
            404,
            "update_not_found",
            `No pending update has release sequence ${sequence}.`,
          );
        }
        applyUpdate(sequence);
        return new Response(null, { status: 204 });
      },
    },
  ];

  return {
    routes,
    api: {
      get current() {
        return { ...current };
      },
      get updates() {
        return updates.map((update) => ({ ...update }));
      },
      setCurrent(next) {
        current = toCurrentVersion(next, now());
      },
      setUpdates(next) {
        updates = toUpdates(next, now());
      },
      apply: applyUpdate,
    },
    reset() {
      current = initialCurrent;
      updates = initialUpdates;
    },
  };
}

/**
 * A running release labelled `version` (release sequence 1) and `count` pending updates whose
 * labels follow it: 1.0.0 is followed by 1.0.1, 1.0.2; "beta" by beta.1 (`mock-api --updates`).
 */
export function fakeReleasesAfter(
  version: string,
  count: number,
): { current: FakeCurrentVersionInit; updates: FakeUpdateInit[] } {
  const trailing = /^(.*?)(\d+)$/.exec(version);
  const updates = Array.from({ length: count }, (_, index) => {
    const step = index + 1;
    const label = trailing ? `${trailing[1]}${Number(trailing[2]) + step}` : `${version}.${step}`;
    return { version: label, releaseSequence: 1 + step, releaseNotes: `Release notes of ${label}` };
  });
  return { current: { version, releaseSequence: 1 }, updates };
}

/** Writes a date as the platform does: ISO 8601 UTC with seven fractional digits. */
function formatTimestamp(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, (_, millis: string) => `.${millis}0000Z`);
}

function toUpdate(init: FakeUpdateInit, at: Date): FakeUpdate {
  if (!Number.isSafeInteger(init.releaseSequence) || init.releaseSequence < 0) {
    throw new RangeError(
      `releaseSequence must be a non-negative integer, got ${init.releaseSequence}.`,
    );
  }
  return {
    version: init.version,
    releaseSequence: init.releaseSequence,
    releaseNotes: init.releaseNotes ?? "",
    releaseDate: toTimestamp(init.releaseDate ?? at),
  };
}

function toCurrentVersion(init: FakeCurrentVersionInit, at: Date): FakeCurrentVersion {
  return { ...toUpdate(init, at), installDate: toTimestamp(init.installDate ?? at) };
}

function toUpdates(inits: readonly FakeUpdateInit[], at: Date): FakeUpdate[] {
  const list = inits.map((init) => toUpdate(init, at));
  const sequences = new Set(list.map((update) => update.releaseSequence));
  if (sequences.size !== list.length) {
    throw new RangeError("Pending updates must have distinct release sequences.");
  }
  return list.sort((a, b) => a.releaseSequence - b.releaseSequence);
}

function toTimestamp(value: string | Date): string {
  return typeof value === "string" ? value : formatTimestamp(value);
}
