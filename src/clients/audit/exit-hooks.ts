// The process's exit, for every audit client that holds events: one pair of process listeners,
// and the clients registered while they are busy.
/** A client with events in its queue, told when the process is about to exit. */
export interface ExitParticipant {
  /** The event loop emptied (Node's beforeExit): asynchronous work may still run. */
  beforeExit(): void;
  /** The process is exiting: only synchronous work runs. */
  exit(): void;
}

// One pair of process listeners for all clients, installed on first use: a listener per client
// would trip Node's MaxListeners warning for applications that make a client per request.
const busy = new Set<ExitParticipant>();
let installed = false;

/** Registers a client while it holds events; runtimes without `process.on` have no exit hooks. */
export function watchExit(participant: ExitParticipant): void {
  if (!installed) {
    installed = true;
    const process = (
      globalThis as { process?: { on?: (event: string, listener: () => void) => unknown } }
    ).process;
    if (typeof process?.on !== "function") return;
    process.on("beforeExit", () => {
      for (const each of [...busy]) each.beforeExit();
    });
    process.on("exit", () => {
      for (const each of [...busy]) each.exit();
    });
  }
  busy.add(participant);
}

/** Unregisters a client whose queue emptied. */
export function unwatchExit(participant: ExitParticipant): void {
  busy.delete(participant);
}
