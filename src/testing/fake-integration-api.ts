/**
 * The running release as the fake's Version API reports it, in the SDK's camelCase. On the wire it
 * is `{ version, release_sequence, release_notes, release_date, install_date }`.
 */
export interface FakeCurrentVersion {
  /** The version label; a string even when it looks numeric, as on the platform. */
  version: string;
  releaseSequence: number;
  releaseNotes: string;
  /** Served verbatim; the platform's format is ISO 8601 UTC with seven fractional digits. */
  releaseDate: string;
  installDate: string;
}

/** A pending update: the current-version record without `installDate`. */
export type FakeUpdate = Omit<FakeCurrentVersion, "installDate">;

/**
 * What {@link FakeIntegrationApi.setCurrent} accepts. Omitted notes are empty, omitted dates are
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

/** What {@link FakeIntegrationApi.setUpdates} accepts for each pending update. */
export type FakeUpdateInit = Omit<FakeCurrentVersionInit, "installDate">;

/**
 * An audit event as the fake received it, in camelCase. Fields the spec does not document are kept
 * under their wire names in `extra`, as plain data.
 */
export interface FakeAuditEvent {
  name?: string;
  title?: string;
  description?: string;
  ipAddress?: string;
  action?: string;
  extra?: Record<string, unknown>;
}

/**
 * How an injected failure answers: an HTTP error status (with optional headers, e.g. Retry-After),
 * or a network error (the connection drops before any answer).
 */
export type FakeFailure =
  | { status: number; headers?: Record<string, string> }
  | { networkError: true };

/** The fake's starting state and hooks; see {@link createFakeIntegrationApi}. */
export interface FakeIntegrationApiOptions {
  /** The running release (default: version "1.0.0", release sequence 1). */
  current?: FakeCurrentVersionInit;
  /** Pending updates (default: none). */
  updates?: readonly FakeUpdateInit[];
  /** The clock for default dates and for `installDate` when an update is applied. */
  now?: () => Date;
  /** Called with every audit event accepted, as it arrives. */
  onAuditEvent?: (event: FakeAuditEvent) => void;
  /** Called with the new current version whenever an update is applied. */
  onUpdateApplied?: (current: FakeCurrentVersion) => void;
}

/** A fake of the platform's Integration API: its state, and a Web-standard request handler. */
export interface FakeIntegrationApi {
  /**
   * Answers a request to the Version or Audit API. An injected network error is answered with
   * `Response.error()`, the Fetch standard's network error: msw turns it into a failed request, a
   * server adapter drops the connection.
   */
  respond(request: Request): Promise<Response>;
  /**
   * A drop-in `fetch` that calls the fake in-process, without a server or msw: pass it as a
   * client's `fetch` option. An injected network error rejects with a `TypeError`, as `fetch` does.
   */
  fetch(input: string | URL | Request, init?: RequestInit): Promise<Response>;
  /** A copy of the running release. */
  readonly current: FakeCurrentVersion;
  /** A copy of the pending updates, by ascending release sequence. */
  readonly updates: readonly FakeUpdate[];
  /** A copy of the audit events received, oldest first. */
  readonly auditEvents: readonly FakeAuditEvent[];
  setCurrent(current: FakeCurrentVersionInit): void;
  /** Replaces the pending updates; release sequences must be distinct. */
  setUpdates(updates: readonly FakeUpdateInit[]): void;
  /**
   * Applies a pending update as PUT /version/v1/:sequence does: it becomes the current version,
   * installed now, and it and every earlier pending update leave the list. Throws when no pending
   * update has that sequence.
   */
  apply(sequence: number): FakeCurrentVersion;
  /**
   * Makes the next `count` calls to an endpoint fail (unknown paths do not count). Failures queue:
   * `failNext(2, { status: 503 })` then `failNext(1, { networkError: true })` fails three calls.
   */
  failNext(count: number, failure: FakeFailure): void;
  /** Back to the state given at creation: no audit events, no queued failures. */
  reset(): void;
}

interface QueuedFailure {
  failure: FakeFailure;
  remaining: number;
}

interface Route {
  method: string;
  path: RegExp;
  answer(request: Request, segment: string): Response | Promise<Response>;
}

/** The documented audit fields: wire name to camelCase name. */
const auditFieldNames = new Map<string, Exclude<keyof FakeAuditEvent, "extra">>([
  ["name", "name"],
  ["title", "title"],
  ["description", "description"],
  ["ip_address", "ipAddress"],
  ["action", "action"],
]);

/**
 * Creates a fake of the platform's Integration API (spec sections 4.2 and 4.3) as plain state and
 * a Web `Request` to `Response` handler, with the platform's wire formats: snake_case fields,
 * timestamps with seven fractional digits, the updates as a bare JSON array, `201` with an empty
 * text/plain body for an audit event, `400` when an Accept header is present but allows no JSON
 * (neither application/json nor any type). It imports nothing, so it runs on any runtime: behind
 * msw (`platform-integration/msw`), behind a server (`platform-integration mock-api`), or
 * in-process through {@link FakeIntegrationApi.fetch}.
 *
 * Beyond the spec, it answers what a platform would reject with a JSON error `{ error, message }`:
 * `400` for an audit body that is not a JSON object or a documented field that is not a string,
 * `415` for an audit body not sent as application/json, `404` for a sequence that is not pending,
 * `404` and `405` for unknown paths and methods. PUT /version/v1/:sequence answers `204`: the spec
 * shows no status or body, so a client must not depend on one.
 *
 * @example
 * ```ts
 * const api = createFakeIntegrationApi({
 *   current: { version: "1.4.0", releaseSequence: 40 },
 *   updates: [{ version: "1.5.0", releaseSequence: 41, releaseNotes: "Faster sync" }],
 * });
 * api.failNext(1, { status: 503 });
 * const response = await api.fetch("http://platform.test/version/v1/updates"); // 503
 * ```
 */
export function createFakeIntegrationApi(
  options: FakeIntegrationApiOptions = {},
): FakeIntegrationApi {
  const now = options.now ?? (() => new Date());
  const initialCurrent = toCurrentVersion(
    options.current ?? { version: "1.0.0", releaseSequence: 1 },
    now(),
  );
  const initialUpdates = toUpdates(options.updates ?? [], now());
  let current = initialCurrent;
  let updates = initialUpdates;
  let auditEvents: FakeAuditEvent[] = [];
  let failures: QueuedFailure[] = [];

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

  const recordAuditEvent = async (request: Request): Promise<Response> => {
    if (!/^application\/json\s*(;|$)/i.test(request.headers.get("content-type") ?? "")) {
      return jsonError(
        415,
        "unsupported_media_type",
        "Send the audit event as JSON, with Content-Type: application/json.",
      );
    }
    let body: unknown;
    try {
      body = JSON.parse(await request.text());
    } catch {
      return jsonError(400, "invalid_json", "The body is not valid JSON.");
    }
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      return jsonError(400, "invalid_event", "The audit event must be a JSON object.");
    }
    const event: FakeAuditEvent = {};
    const extra: [string, unknown][] = [];
    for (const [key, value] of Object.entries(body)) {
      const field = auditFieldNames.get(key);
      if (field === undefined) {
        extra.push([key, value]);
      } else if (typeof value === "string") {
        event[field] = value;
      } else {
        return jsonError(400, "invalid_event", `The field ${key} must be a string.`);
      }
    }
    // Object.fromEntries defines keys as own data properties: a "__proto__" key stays plain data.
    if (extra.length > 0) event.extra = Object.fromEntries(extra);
    auditEvents.push(event);
    options.onAuditEvent?.(structuredClone(event));
    return new Response(null, {
      status: 201,
      headers: { "content-type": "text/plain; charset=utf-8", "content-length": "0" },
    });
  };

  const routes: Route[] = [
    {
      method: "GET",
      path: /^\/version\/v1\/current$/,
      answer: () => json(200, { ...updateToWire(current), install_date: current.installDate }),
    },
    {
      method: "GET",
      path: /^\/version\/v1\/updates$/,
      answer: () => json(200, updates.map(updateToWire)),
    },
    {
      method: "PUT",
      path: /^\/version\/v1\/([^/]+)$/,
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
    { method: "POST", path: /^\/audit\/v1\/event$/, answer: recordAuditEvent },
  ];

  const takeFailure = (): FakeFailure | undefined => {
    const next = failures[0];
    if (next === undefined) return undefined;
    next.remaining -= 1;
    if (next.remaining === 0) failures.shift();
    return next.failure;
  };

  const respond = async (request: Request): Promise<Response> => {
    const { pathname } = new URL(request.url);
    const matches = routes.flatMap((route) => {
      const match = route.path.exec(pathname);
      return match ? [{ route, segment: match[1] ?? "" }] : [];
    });
    if (matches.length === 0) {
      return jsonError(
        404,
        "not_found",
        "No such endpoint: the Version API is under /version/v1, the Audit API at /audit/v1/event.",
      );
    }
    const chosen = matches.find(({ route }) => route.method === request.method);
    if (chosen === undefined) {
      const allow = matches.map(({ route }) => route.method).join(", ");
      return jsonError(405, "method_not_allowed", `This endpoint answers ${allow}.`, {
        allow,
      });
    }
    const failure = takeFailure();
    if (failure !== undefined) {
      if ("networkError" in failure) return Response.error();
      return jsonError(
        failure.status,
        "injected_failure",
        "This failure was injected with failNext().",
        failure.headers,
      );
    }
    if (!acceptsJson(request.headers.get("accept"))) {
      return jsonError(
        400,
        "not_acceptable",
        "The Accept header must allow application/json or */*.",
      );
    }
    return chosen.route.answer(request, chosen.segment);
  };

  return {
    respond,
    async fetch(input, init) {
      const response = await respond(new Request(input, init));
      if (response.type === "error") {
        throw new TypeError("fetch failed", {
          cause: new Error("A network error was injected with failNext()."),
        });
      }
      return response;
    },
    get current() {
      return { ...current };
    },
    get updates() {
      return updates.map((update) => ({ ...update }));
    },
    get auditEvents() {
      return structuredClone(auditEvents);
    },
    setCurrent(next) {
      current = toCurrentVersion(next, now());
    },
    setUpdates(next) {
      updates = toUpdates(next, now());
    },
    apply: applyUpdate,
    failNext(count, failure) {
      if (!Number.isSafeInteger(count) || count < 1) {
        throw new RangeError(`failNext: count must be a positive integer, got ${count}.`);
      }
      if (
        !("networkError" in failure) &&
        !(Number.isInteger(failure.status) && failure.status >= 400 && failure.status <= 599)
      ) {
        throw new RangeError(
          `failNext: status must be an error status (400 to 599), got ${failure.status}.`,
        );
      }
      failures.push({ failure, remaining: count });
    },
    reset() {
      current = initialCurrent;
      updates = initialUpdates;
      auditEvents = [];
      failures = [];
    },
  };
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

function updateToWire(update: FakeUpdate) {
  return {
    version: update.version,
    release_sequence: update.releaseSequence,
    release_notes: update.releaseNotes,
    release_date: update.releaseDate,
  };
}

/** True when the Accept header is absent or allows JSON (q=0 excludes a range). */
function acceptsJson(accept: string | null): boolean {
  if (accept === null) return true;
  return accept.split(",").some((range) => {
    const [type = "", ...parameters] = range.split(";").map((part) => part.trim().toLowerCase());
    const quality = parameters.find((parameter) => parameter.startsWith("q="));
    if (quality !== undefined && Number(quality.slice(2)) === 0) return false;
    return type === "*/*" || type === "application/*" || type === "application/json";
  });
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { ...headers, "content-type": "application/json" },
  });
}

function jsonError(
  status: number,
  error: string,
  message: string,
  headers?: Record<string, string>,
): Response {
  return json(status, { error, message }, headers);
}
