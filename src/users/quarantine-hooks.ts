// The quarantine's events: the figures of `handler.stats()`, the metric, the `onQuarantine` hook,
// `onChange` for what the quarantine stores on its own, and the warning of a kept message.
import type { Logger } from "../internal/logger.ts";
import { lazyInstruments, type OpenTelemetryApi, scopeOf } from "../internal/telemetry.ts";
import type { PendingUser, QuarantineStep } from "./quarantine-store.ts";
import type {
  QuarantineChange,
  QuarantinedUser,
  QuarantineEvent,
  QuarantineOptions,
  QuarantineStats,
} from "./quarantine-types.ts";
import type { UserPatch } from "./user-record.ts";

/** The events of the quarantine's steps, and what they count. */
export interface QuarantineHooks {
  /** The figures of `handler.stats().quarantine`, counted as the events happen. */
  readonly counts: QuarantineStats;
  /** How many of the running retry pass's hooks are being awaited now. */
  passHooks(): number;
  /** A change no message will bring again: a failing hook is reported, the answer unchanged. */
  changed(change: QuarantineChange, patch?: UserPatch, inPass?: boolean): Promise<void>;
  /** The events of a step; `onChange` for the step's own applied write is the caller's. */
  told(
    step: QuarantineStep,
    operation: "create" | "modify",
    log?: Logger,
    inPass?: boolean,
  ): Promise<void>;
}

/** The hooks of one quarantine. */
export function createQuarantineHooks(
  options: Pick<QuarantineOptions, "logger" | "onChange" | "onQuarantine" | "report">,
): QuarantineHooks {
  const { logger, onChange, onQuarantine, report } = options;
  const counts = { kept: 0, released: 0, discarded: 0, waiting: 0 };
  // How many of the running pass's hooks are being awaited (a retry from one of them must not
  // wait for any pass).
  let passHooks = 0;
  const instruments = lazyInstruments((api: OpenTelemetryApi) =>
    scopeOf(api).meter.createCounter("platform_integration.provisioning.quarantine", {
      description:
        "Provisioning messages kept in the quarantine, and pending users released from it or discarded, by event.",
      unit: "{message}",
    }),
  );

  async function tell(type: QuarantineEvent["type"], pending: PendingUser, inPass = false) {
    counts[type]++;
    instruments()?.add(1, { "platform_integration.quarantine.event": type });
    if (onQuarantine === undefined) return;
    if (inPass) passHooks++;
    try {
      await onQuarantine({ type, pending: shown(pending) });
    } catch (error) {
      report(
        error,
        { operation: pending.operation, uuid: pending.uuid, status: 500 },
        pending.patch,
      );
    } finally {
      if (inPass) passHooks--;
    }
  }

  async function changed(change: QuarantineChange, patch?: UserPatch, inPass = false) {
    if (onChange === undefined) return;
    if (inPass) passHooks++;
    try {
      await onChange(change);
    } catch (error) {
      report(error, { operation: "modify", uuid: change.uuid, status: 500 }, patch);
    } finally {
      if (inPass) passHooks--;
    }
  }

  async function told(
    step: QuarantineStep,
    operation: "create" | "modify",
    log: Logger = logger,
    inPass = false,
  ): Promise<void> {
    switch (step.outcome) {
      case "kept": {
        const { pending, cleared } = step;
        log.warn(
          `platform-integration: kept the ${operation} of user ${JSON.stringify(pending.uuid)} in the quarantine and answered success, so that the directory keeps flowing: ${withoutPassword(pending.reason, pending.patch.password)}. It applies by itself once another user frees the value it waits for (or on handler.retryQuarantined()); handler.quarantined() lists what is kept.`,
          { operation, uuid: pending.uuid, fields: pending.fields },
        );
        if (pending.attempts === 1) counts.waiting++;
        // The conflicting fields were cleared from the stored user: a change of its own.
        if (cleared !== undefined) {
          await changed(
            { type: "updated", uuid: cleared.uuid, user: cleared },
            pending.patch,
            inPass,
          );
        }
        await tell("kept", pending, inPass);
        return;
      }
      case "released":
        counts.waiting = Math.max(0, counts.waiting - 1);
        await tell("released", step.pending, inPass);
        return;
      case "deleted":
        if (step.discarded !== undefined) {
          counts.waiting = Math.max(0, counts.waiting - 1);
          await tell("discarded", step.discarded, inPass);
        }
        return;
      default:
        return;
    }
  }

  return { counts, passHooks: () => passHooks, changed, told };
}

/** A pending user as it may leave the handler: without the password, in its text or its fields. */
export function shown(pending: PendingUser): QuarantinedUser {
  const { password, ...user } = pending.patch;
  return {
    uuid: pending.uuid,
    operation: pending.operation,
    user,
    reason: withoutPassword(pending.reason, password),
    fields: [...pending.fields],
    awaits: pending.awaits.map((awaited) => ({ ...awaited })),
    since: pending.since,
    attempts: pending.attempts,
    messages: pending.messages,
  };
}

function withoutPassword(text: string, password: string | null | undefined): string {
  return typeof password === "string" && password !== ""
    ? text.replaceAll(password, "[redacted]")
    : text;
}
