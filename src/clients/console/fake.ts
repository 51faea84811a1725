// The Status and Console APIs' fake: its routes, the start-up statuses received and the console
// options served, read and written by the records of console-record.ts.

import type { JsonObject } from "type-fest";
import {
  type FakeRoute,
  jsonError,
  readJsonObjectBody,
  text,
} from "../integration-api/fake-answers.ts";
import { consoleOptionParameter, startupStatusRecord } from "./console-record.ts";

/** A start-up status as the fake's Status API received it (`startupStatusRecord`). */
export interface FakeStartupStatus {
  message: string;
  severity?: string;
}

/** The fake Status and Console APIs' state, as `api.console` of a fake Integration API. */
export interface FakeConsoleApi {
  /** Every start-up status received, oldest first. */
  readonly startupStatuses: FakeStartupStatus[];
  /** The last start-up status received: what the admin console would show. */
  readonly startupStatus: FakeStartupStatus | undefined;
  /** A copy of the console options served by `GET /console/v1/option?name=`. */
  readonly options: Record<string, string>;
  /** Sets a console option, e.g. `tls.authority.cert` to a PEM certificate. */
  setOption(name: string, value: string): void;
}

/**
 * The Status API (`PUT /status/v1/startup`, answering 204 with an empty text/plain body) and the
 * Console API's options (`GET /console/v1/option?name=`, the raw value as text, 400 for a missing
 * or unknown name), for a fake Integration API.
 */
export function createFakeConsole(
  initialOptions: Record<string, string> | undefined,
  onStartupStatus?: (status: FakeStartupStatus) => void,
): { api: FakeConsoleApi; routes: FakeRoute[]; reset(): void } {
  // A Map, so that an option named __proto__ is data like any other.
  const initial = new Map(Object.entries(initialOptions ?? {}));
  let options = new Map(initial);
  let statuses: FakeStartupStatus[] = [];

  const routes: FakeRoute[] = [
    {
      method: "PUT",
      path: "/status/v1/startup",
      answer: async (request) => {
        const body = await readJsonObjectBody(request);
        if (body instanceof Response) return body;
        const { value, problems } = startupStatusRecord.read(body as JsonObject);
        if (problems.length > 0) {
          return jsonError(
            400,
            "invalid_status",
            "The body must be { message, severity? }, both strings.",
          );
        }
        const status = value as FakeStartupStatus;
        statuses.push(status);
        onStartupStatus?.({ ...status });
        return text(204, "");
      },
    },
    {
      method: "GET",
      path: "/console/v1/option",
      answer: (request) => {
        const name = new URL(request.url).searchParams.get(consoleOptionParameter);
        if (name === null || name === "") {
          return jsonError(400, "missing_name", "Pass the name of a console option: ?name=...");
        }
        const value = options.get(name);
        if (value === undefined) {
          return jsonError(
            400,
            "unknown_option",
            `The console has no option named ${JSON.stringify(name)}: set it with setOption (mock-api: --console-option name=value)`,
          );
        }
        return text(200, value);
      },
    },
  ];

  return {
    routes,
    api: {
      get startupStatuses() {
        return statuses.map((status) => ({ ...status }));
      },
      get startupStatus() {
        const last = statuses.at(-1);
        return last === undefined ? undefined : { ...last };
      },
      get options() {
        return Object.fromEntries(options);
      },
      setOption(name, value) {
        options.set(name, value);
      },
    },
    reset() {
      options = new Map(initial);
      statuses = [];
    },
  };
}
