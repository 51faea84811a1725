// How a change feed (Content Sync, DirSync) says that it cannot serve: a lasting reason is told
// once, in one cycle's report, and every cycle after it reads the whole directory; a passing
// reason is told for the one cycle that read the whole directory.

/** The end of a lasting reason's note. */
export const everyCycle = ": every cycle reads the whole directory";
/** The end of a passing reason's note. */
export const thisCycle = ": this cycle read the whole directory";

/** Whether a feed serves, and the lasting reason it does not. */
export interface FeedSwitch {
  /** The lasting reason the feed cannot serve, once one is known. */
  readonly off: string | undefined;
  /** Turns the feed off for good; the note for the cycle that found out. */
  lasting(reason: string): { note: string };
  /** The lasting reason as a note if no report told it yet; nothing after that. */
  unavailable(): { note?: string };
}

/** A switch that is on, or off from the start for `reason` (not told yet). */
export function createFeedSwitch(reason?: string): FeedSwitch {
  let off = reason;
  let said = false;
  return {
    get off() {
      return off;
    },
    lasting(why) {
      off = why;
      said = true;
      return { note: why };
    },
    unavailable() {
      if (off === undefined || said) return {};
      said = true;
      return { note: off };
    },
  };
}
