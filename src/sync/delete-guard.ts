// The mass-delete guard: how many deletes a cycle may send before it sends anything.
import type { DeleteGuard, DeleteGuardStop } from "./directory-sync-types.ts";

/** The delete guard's default thresholds (docs/directory-sync.md). */
const defaultMaxDeletes = 500;
const defaultMaxPercent = 20;
/** Below this many deletes, the percentage does not trip the guard (deleting every user does). */
const percentFloor = 20;

/** Thrown inside a cycle's plan when the delete guard stops it: nothing is sent. */
export class DeleteGuardError extends Error {
  readonly stop: DeleteGuardStop;
  constructor(stop: DeleteGuardStop) {
    super(stop.message);
    this.stop = stop;
  }
}

/**
 * Throws a {@link DeleteGuardError} when `deletes`, of the users the application holds (`held`,
 * asked only when there are deletes to judge), is more than the guard lets a cycle send.
 */
export function checkDeleteGuard(
  deletes: number,
  held: () => number,
  {
    deleteGuard: guard,
    allowDeletes = 0,
  }: { deleteGuard?: DeleteGuard | false; allowDeletes?: number },
): void {
  if (deletes === 0 || guard === false || deletes <= allowDeletes) return;
  const holding = held();
  const maxDeletes = guard?.maxDeletes ?? defaultMaxDeletes;
  const maxPercent = guard?.maxPercent ?? defaultMaxPercent;
  const allow = `If they are meant, allow them: allowDeletes: ${deletes} (sync --allow-deletes ${deletes}).`;
  let why: string | undefined;
  if (deletes >= holding) {
    why =
      `The directory returned none of the ${holding} users the application holds: refusing to ` +
      "delete them all. Check the base DN and the filter.";
  } else if (deletes > maxDeletes) {
    why = `This cycle would delete ${deletes} of the ${holding} users the application holds, more than ${maxDeletes}: no delete was sent. Check the base DN and the filter.`;
  } else if (deletes >= percentFloor && deletes * 100 > holding * maxPercent) {
    why = `This cycle would delete ${deletes} of the ${holding} users the application holds, more than ${maxPercent} %: no delete was sent. Check the base DN and the filter.`;
  }
  if (why !== undefined) {
    throw new DeleteGuardError({ deletes, held: holding, message: `${why} ${allow}` });
  }
}
