// One convention for every model-based test (fast-check `fc.commands`): `npm test` runs a bounded,
// fixed-seed exploration so that CI is reproducible; `npm run explore -- --steps N [--seed S]` runs
// the same models for about N commands in all, from a fresh seed unless one is given. fast-check's
// failure report carries the seed and the shrunk path; the line printed here names the seed before
// the run starts, so that even a run killed from outside can be replayed.
import type fc from "fast-check";

/** The bounded run of `npm test`, as each model sizes it for two shared cores. */
export interface BoundedRun {
  /** How many command sequences `npm test` tries. */
  readonly numRuns: number;
  /** The longest sequence of commands one run may draw. */
  readonly maxCommands: number;
}

/** What a model-based test passes to `fc.commands` and `fc.assert`, and the timeout its test needs. */
export interface Exploration {
  readonly maxCommands: number;
  readonly parameters: fc.Parameters<unknown>;
  /** The vitest timeout of the test that runs it. */
  readonly timeoutMs: number;
  /** True under `npm run explore`. */
  readonly exploring: boolean;
}

const defaultSeed = 20_261_127;

/**
 * The exploration of one model: bounded and seeded in `npm test`, longer under
 * `npm run explore` (`PLATFORM_INTEGRATION_EXPLORE_STEPS`, `PLATFORM_INTEGRATION_EXPLORE_SEED`).
 */
export function exploration(name: string, bounded: BoundedRun): Exploration {
  const steps = Number(process.env.PLATFORM_INTEGRATION_EXPLORE_STEPS ?? 0);
  const seedText = process.env.PLATFORM_INTEGRATION_EXPLORE_SEED;
  const exploring = Number.isFinite(steps) && steps > 0;
  const seed =
    seedText !== undefined && seedText !== ""
      ? Number(seedText)
      : exploring
        ? (Date.now() ^ (process.pid << 8)) | 0
        : defaultSeed;
  const numRuns = exploring ? Math.max(1, Math.ceil(steps / bounded.maxCommands)) : bounded.numRuns;
  if (exploring) {
    console.log(
      `explore ${name}: seed ${seed}, ${numRuns} runs of up to ${bounded.maxCommands} commands (replay: npm run explore -- --seed ${seed} --steps ${steps})`,
    );
  }
  return {
    maxCommands: bounded.maxCommands,
    parameters: { seed, numRuns, verbose: 1 },
    timeoutMs: exploring ? 6 * 60 * 60_000 : 120_000,
    exploring,
  };
}
