// The operation core: what each of the API's operations does once routed and its body read, with
// the per-uuid lock, the transform, the store, the hooks, and the mapping of their errors to
// answers (a store's to 503, a hook's to 500, a ProvisioningError's to its own status).
import { type Logger, resolveLogger } from "../internal/logger.ts";
import { heldOver } from "../users/held-over.ts";
import { KeyedLock } from "../users/keyed-lock.ts";
import { createQuarantine, type Quarantine } from "../users/quarantine.ts";
import { isUserConflict } from "../users/user-conflict-error.ts";
import type { UpsertResult, UserPatch } from "../users/user-record.ts";
import type { UserStore } from "../users/user-store.ts";
import { createConflictHint } from "./conflict-hint.ts";
import { errorResponse, ProvisioningError } from "./errors.ts";
import type { ProvisioningHandlerOptions } from "./handler-options.ts";
import { reportError, type Sensitive } from "./report-error.ts";
import type { ProvisioningErrorContext, ProvisioningResponse } from "./types.ts";
import { UnreportedCreations } from "./unreported-creations.ts";

const created: ProvisioningResponse = { status: 201, headers: {}, body: undefined };
const noContent: ProvisioningResponse = { status: 204, headers: {}, body: undefined };
const notReady = errorResponse("not_ready", "The user store is not ready yet; try again later");
const storeUnavailable = errorResponse(
  "store_unavailable",
  "The user store failed; nothing was acknowledged, send the message again later",
);
const internalError = errorResponse(
  "internal_error",
  "The application failed to process this message",
);
const invalidPathUuid = errorResponse(
  "invalid_uuid",
  "The uuid in the path is not valid percent-encoding",
);

/**
 * The operations, each answering and never rejecting. `log`, where given, is the request's own
 * logger (a framework's, with its request id): the request's failures go there, not to the
 * handler's `logger`.
 */
export interface Operations {
  ping(log?: Logger): Promise<ProvisioningResponse>;
  upsert(
    patches: readonly UserPatch[],
    operation: "create" | "modify",
    log?: Logger,
  ): Promise<ProvisioningResponse>;
  /** Deletes the user named by a raw (percent-encoded) path segment. */
  remove(segment: string, log?: Logger): Promise<ProvisioningResponse>;
  reset(log?: Logger): Promise<ProvisioningResponse>;
  /** The quarantine, when the handler's `quarantine` option is on. */
  quarantine: Quarantine | undefined;
  /**
   * The answer to an error: its own for a ProvisioningError, else 500 or 503 after `onError`.
   * `sensitive` names what the default report must cut out of the error's text.
   */
  fail(
    error: unknown,
    context: ProvisioningErrorContext,
    sensitive?: Sensitive,
    log?: Logger,
  ): ProvisioningResponse;
}

/** The operations over the handler's store and hooks. */
export function createOperations(
  options: ProvisioningHandlerOptions & { quarantineStore?: UserStore },
): Operations {
  const { store, transform, onChange, onReset } = options;
  const logger = resolveLogger(options.logger);
  const { onError } = options;
  const lanes = new KeyedLock();
  const unreported = new UnreportedCreations();
  // The quarantine reads and releases through the store as given: its own calls are not requests.
  const quarantine =
    options.quarantine === true
      ? createQuarantine({
          store: options.quarantineStore ?? store,
          lanes,
          logger,
          onChange,
          onQuarantine: options.onQuarantine,
          report: (error, context, patch) => void fail(error, context, { patch }),
        })
      : undefined;
  const hint = quarantine === undefined ? createConflictHint(logger) : undefined;
  const held =
    quarantine === undefined ? heldOver(options.quarantineStore ?? store, logger) : undefined;

  function fail(
    error: unknown,
    context: ProvisioningErrorContext,
    sensitive?: Sensitive,
    log: Logger = logger,
  ): ProvisioningResponse {
    if (error instanceof ProvisioningError) return errorResponse(error.code, error.message);
    try {
      if (onError === undefined) reportError(log, error, context, sensitive);
      else onError(error, context);
    } catch (hookError) {
      reportError(log, hookError, context, sensitive);
    }
    return context.status === 503 ? storeUnavailable : internalError;
  }

  async function ping(log?: Logger): Promise<ProvisioningResponse> {
    try {
      return store.ready === undefined || (await store.ready()) ? noContent : notReady;
    } catch (error) {
      return fail(error, { operation: "ping", uuid: undefined, status: 503 }, undefined, log);
    }
  }

  // One function from lock to store to hook, without nested async calls: this is the hot path.
  async function upsert(
    patches: readonly UserPatch[],
    operation: "create" | "modify",
    log?: Logger,
  ): Promise<ProvisioningResponse> {
    // The pending users this request's writes woke, released once it has written them all.
    const wakes: string[] = [];
    try {
      for (let index = 0; index < patches.length; index++) {
        const patch = patches[index] as UserPatch;
        const uuid = patch.uuid;
        const turn = lanes.acquire(uuid);
        if (turn !== undefined) await turn;
        try {
          let change = patch;
          if (transform !== undefined) {
            try {
              change = await transform(patch, { operation });
              // The user's turn is taken by uuid: a transform must not write another user.
              if (change.uuid !== uuid) {
                throw new TypeError("transform changed the uuid of a patch");
              }
            } catch (error) {
              return fail(error, { operation, uuid, status: 500 }, { patch }, log);
            }
          }
          let result: UpsertResult;
          try {
            if (quarantine === undefined) {
              // A plain upsert, unless the store may hold a pending record for the uuid.
              const step = held?.may(uuid) ? await held.write(operation, change) : undefined;
              if (step === undefined) result = await store.upsert(change);
              else if (step.outcome === "applied" || step.outcome === "released") {
                result = step.result;
              } else continue;
            } else {
              const step = await quarantine.write(operation, change, log);
              if (step.wakes.length > 0) wakes.push(...step.wakes);
              if (step.outcome !== "applied" && step.outcome !== "released") continue;
              result = step.result;
            }
          } catch (error) {
            if (quarantine === undefined && isUserConflict(error)) hint?.(uuid, error, log);
            return fail(error, { operation, uuid, status: 503 }, { patch: change }, log);
          }
          if (onChange !== undefined) {
            const type = unreported.typeOf(uuid, result.created);
            try {
              await onChange({ type, uuid, user: result.user });
            } catch (error) {
              unreported.settle(uuid, type, result.user, false);
              return fail(error, { operation, uuid, status: 500 }, { patch }, log);
            }
            unreported.settle(uuid, type, result.user, true);
          }
        } finally {
          if (quarantine === undefined) lanes.release(uuid);
          else {
            const woken = await quarantine.finish(uuid);
            if (woken.length > 0) wakes.push(...woken);
          }
        }
      }
    } finally {
      // A write may have freed values pending users wait for: only those are tried.
      // And users whose release failed before are tried again (a few per request).
      const settling = quarantine?.settle(wakes);
      if (settling !== undefined) await settling;
    }
    return operation === "create" ? created : noContent;
  }

  async function remove(segment: string, log?: Logger): Promise<ProvisioningResponse> {
    let uuid: string;
    try {
      uuid = decodeURIComponent(segment);
    } catch {
      return invalidPathUuid;
    }
    let wakes: string[] = [];
    const turn = lanes.acquire(uuid);
    if (turn !== undefined) await turn;
    try {
      try {
        // With the quarantine, the delete and the discard of the pending record are one step.
        if (quarantine !== undefined) wakes = (await quarantine.remove(uuid)).wakes;
        else if (!(held?.may(uuid) && (await held.remove(uuid)))) await store.delete(uuid);
      } catch (error) {
        return fail(error, { operation: "delete", uuid, status: 503 }, undefined, log);
      }
      if (onChange !== undefined) {
        // A creation the hook never accepted is reported before the user's deletion.
        const uncreated = unreported.take(uuid);
        try {
          if (uncreated !== undefined) await onChange({ type: "created", uuid, user: uncreated });
        } catch (error) {
          unreported.restore(uuid, uncreated as NonNullable<typeof uncreated>);
          return fail(error, { operation: "delete", uuid, status: 500 }, undefined, log);
        }
        try {
          await onChange({ type: "deleted", uuid });
        } catch (error) {
          return fail(error, { operation: "delete", uuid, status: 500 }, undefined, log);
        }
      }
    } finally {
      if (quarantine === undefined) lanes.release(uuid);
      else wakes.push(...(await quarantine.finish(uuid)));
      await quarantine?.settle(wakes);
    }
    return noContent;
  }

  async function reset(log?: Logger): Promise<ProvisioningResponse> {
    try {
      if (onReset !== undefined) await onReset();
      else await store.reset?.();
    } catch (error) {
      // The store's failure is retriable; the application's own hook failing is a bug.
      return fail(
        error,
        { operation: "reset", uuid: undefined, status: onReset === undefined ? 503 : 500 },
        undefined,
        log,
      );
    }
    unreported.clear();
    try {
      await onChange?.({ type: "reset" });
    } catch (error) {
      return fail(error, { operation: "reset", uuid: undefined, status: 500 }, undefined, log);
    }
    return noContent;
  }

  return { ping, upsert, remove, reset, fail, quarantine };
}
