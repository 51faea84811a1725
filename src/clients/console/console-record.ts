import * as z from "zod/mini";
import { wireNamesOf } from "../../internal/wire-names.ts";
import { wireRecord } from "../integration-api/wire-record.ts";

// The Status and Console APIs' records, defined once. The client only writes them, with the
// wire names alone (so the `./console` entry does not bundle zod); the fake reads them with the
// zod record, built from the same names. A console option's value is raw text/plain, no record.

/** The start-up status's fields (PUT /status/v1/startup). */
export const startupStatusFields = ["message", "severity"] as const;

/** Each field's wire name. */
export const startupStatusWireNames = /* @__PURE__ */ wireNamesOf(startupStatusFields);

function buildStartupStatusRecord() {
  return wireRecord({
    message: z.string(),
    /** Absent for progress text; `"error"` is the only documented value. */
    severity: z.exactOptional(z.string()),
  } satisfies { [Field in (typeof startupStatusFields)[number]]: z.ZodMiniType });
}

/**
 * The start-up status as the platform reads it: `{ message, severity? }`, both strings. Built by
 * a pure call, so that the client's bundle, which only writes it, leaves it and zod out.
 */
export const startupStatusRecord = /* @__PURE__ */ buildStartupStatusRecord();

/** The query parameter that names a console option (GET /console/v1/option?name=). */
export const consoleOptionParameter = "name";
