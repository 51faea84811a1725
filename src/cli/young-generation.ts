/**
 * The commands that run long and allocate much, each with a cap on V8's young generation: on
 * Node, the bin runs such a command in a worker thread with that limit (V8 sizes its heap only
 * when an isolate starts) and one scavenger thread, unless Node's own command line or
 * NODE_OPTIONS sizes the young generation or sets how it is collected. Kept apart from the
 * commands, so that the bin's main thread decides without loading them: it then only relays
 * signals and output, and loading the CLI in it too cost 5 to 12 MiB of RSS.
 */
export const youngGenerationCapsMb: ReadonlyMap<string, number> = new Map([
  // V8 sizes the young generation by the machine's memory: on a 24 GiB machine a 100,000-user
  // sync peaked at 222 MiB RSS with 16 MiB of live heap. The directory is read in a thread of its
  // own (readInWorker), so this one only delivers: 16 MiB peaked at 183-205 MiB, 48 MiB at
  // 204-212 MiB, at the same speed (bench/directory-sync.bench.ts).
  ["sync", 16],
]);
