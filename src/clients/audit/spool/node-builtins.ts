// The Node builtins the spool writes with (file system, path, host name, pid, CRC-32), reached at
// run time so that a Workers bundle of ./audit never follows them.
import type * as Fs from "node:fs";
import type * as Os from "node:os";
import type * as Path from "node:path";
import type * as Zlib from "node:zlib";

interface NodeProcess {
  pid: number;
  getBuiltinModule?: {
    (id: "node:fs"): typeof Fs;
    (id: "node:os"): typeof Os;
    (id: "node:path"): typeof Path;
    (id: "node:zlib"): typeof Zlib;
  };
}

/** The builtins the spool needs, reached at run time so that no Workers bundle follows them. */
export interface SpoolBuiltins {
  fs: typeof Fs;
  path: typeof Path;
  hostname: string;
  pid: number;
  crc32: (data: Uint8Array, value?: number) => number;
}

/**
 * The file system and checksum of Node 22.13+ (or a runtime with its node: builtins and
 * `zlib.crc32`), through process.getBuiltinModule as in node-tls-fetch.ts.
 *
 * @throws TypeError on a runtime without them (Workers, the browser): a spool needs a disk.
 */
export function spoolBuiltins(): SpoolBuiltins {
  const node = (globalThis as { process?: NodeProcess }).process;
  const load = node?.getBuiltinModule;
  const zlib = load?.("node:zlib");
  if (node === undefined || load === undefined || typeof zlib?.crc32 !== "function") {
    throw new TypeError(
      "The audit spool needs node:fs and zlib.crc32 (Node 22.13+, Bun or Deno): leave the spool option out on this runtime.",
    );
  }
  return {
    fs: load("node:fs"),
    path: load("node:path"),
    hostname: load("node:os").hostname(),
    pid: node.pid,
    crc32: zlib.crc32,
  };
}
