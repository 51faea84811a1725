import { integerOption, parseCommandArgs } from "../args.ts";
import type { Command } from "../command.ts";

const usage = `Usage: platform-integration demo [options]

The whole integration, end to end, in this process and on 127.0.0.1 only:

  - an app: the Provisioning API (createProvisioningHandler and toNodeHandler) over a SQLite
    file, recording an audit event for every change it stores;
  - a local fake of the platform's Integration API (the Version and Audit APIs);
  - the platform, simulated, with a generated directory of users.

It runs the initial sync, changes the directory (modifies, deletes, adds) and loses one answer so
that the platform delivers that message again, then makes the database fail once and shows the
platform retrying. It ends with a summary read back from SQLite, the fake's audit log and the
Version API. Needs node:sqlite (Node 22.13 or later).

Options:
  --users <n>   How many users the directory holds at first (default 1000)
  --keep        Keep the SQLite file and print its path (default: removed at the end)
  -h, --help    Show this help

Exit status: 0 when every step went as described, 1 otherwise, 2 for a wrong command line.
`;

/** `platform-integration demo`: the app, the Integration API and the platform, in one process. */
export const demoCommand: Command = {
  name: "demo",
  summary: "Run an app on SQLite, a fake Integration API and the platform, end to end",
  usage,
  async run(args, io) {
    const { values } = parseCommandArgs(
      args,
      { users: { type: "string" }, keep: { type: "boolean" } },
      { positionals: false },
    );
    const users = integerOption(values.users, "users", { min: 1, fallback: 1000 });
    // Loaded on use: only the demo needs the handler, the clients and node:sqlite, so the other
    // commands start without them.
    const { runDemo } = await import("../demo.ts");
    return runDemo(io, { users, keep: values.keep === true });
  },
};
