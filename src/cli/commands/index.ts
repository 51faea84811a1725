import type { Command } from "../command.ts";
import { conformanceCommand } from "./conformance.ts";
import { demoCommand } from "./demo.ts";
import { doctorCommand } from "./doctor.ts";
import { mockApiCommand } from "./mock-api.ts";
import { simulateCommand } from "./simulate.ts";
import { syncCommand } from "./sync.ts";

/** Every command of the CLI, in the order that `--help` lists them. */
export const commands: readonly Command[] = [
  demoCommand,
  mockApiCommand,
  conformanceCommand,
  simulateCommand,
  syncCommand,
  doctorCommand,
];
