import * as z from "zod/mini";
import { timestampCodec, wireRecord } from "../integration-api/wire-record.ts";

// The Version API's records, defined once: the client decodes with them, the fake Version API
// encodes with them (src/clients/version/fake.ts), and the types of read-version.ts are
// their outputs. Wire names are the snake_case of the names below.

const timestamp = timestampCodec();

// Each record's shape is a constant of its own, and the public interfaces (read-version.ts)
// are its zod output: the ./version entry's declarations then name only zod and these shapes,
// nothing of the internal record helpers, which the build shares with ./testing (TS2742).

/** The fields of the running version, all required. */
export const currentVersionShape = {
  /** The version label; a string even when it looks like a number ("100"). */
  version: z.string(),
  /** The release's sequence number: the argument of `apply()`. */
  releaseSequence: z.int(),
  releaseNotes: z.string(),
  releaseDate: timestamp,
  installDate: timestamp,
};

/** GET /version/v1/current: `{ version, release_sequence, release_notes, release_date, install_date }`. */
export const currentVersionRecord = /* @__PURE__ */ wireRecord(currentVersionShape);

/** The fields of a pending update: `releaseSequence` required, the others optional. */
export const versionUpdateShape = {
  version: z.exactOptional(currentVersionShape.version),
  releaseSequence: currentVersionShape.releaseSequence,
  releaseNotes: z.exactOptional(currentVersionShape.releaseNotes),
  releaseDate: z.exactOptional(timestamp),
  installDate: z.exactOptional(timestamp),
};

/**
 * An item of GET /version/v1/updates. The platform documents none of its fields: only
 * `release_sequence` is required, the others are those of the current version, optional.
 */
export const versionUpdateRecord = /* @__PURE__ */ wireRecord(versionUpdateShape);
