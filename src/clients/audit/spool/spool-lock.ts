// One process per spool directory: the lock file, taken exclusively, refreshed while held and
// taken over from a process that is gone; SpoolLockedError when a live one holds it.
import type { SpoolBuiltins } from "./node-builtins.ts";

/**
 * Another process (or another client of this process) holds the spool directory: two writers
 * would interleave their segments and deliver each other's events twice, so the second is
 * refused. Give each process its own directory.
 */
export class SpoolLockedError extends Error {
  override readonly name = "SpoolLockedError";
  /** The spool directory. */
  readonly dir: string;
  /** The holder's process id and host name, as its lock file records them. */
  readonly holder: { pid: number; host: string };

  constructor(dir: string, holder: { pid: number; host: string }, why: string) {
    super(
      `The audit spool ${dir} is in use by process ${holder.pid} on ${holder.host} (${why}). Give each process its own spool directory, for example one per replica; if that process is gone, delete ${dir}/lock.`,
    );
    this.dir = dir;
    this.holder = holder;
  }
}

interface LockContent {
  pid: number;
  host: string;
  token: string;
}

/** How often the holder refreshes its lock file's time, and when another host's lock is stale. */
const heartbeatMs = 10_000;
const staleAfterMs = 6 * heartbeatMs;
// Directories this process holds: a second client on one of them is refused like another process.
const heldHere = new Set<string>();

/** A held spool lock; `release()` gives it up. */
export interface SpoolLock {
  release(): void;
}

/**
 * Takes the spool directory's lock file (`lock`, created exclusively, holding the pid, the host
 * name and a random token). A lock left by a dead process is taken over: on this host, when its
 * pid is no longer running (or is this process's own, reused after a restart); from another host,
 * when its holder stopped refreshing it for a minute (a shared volume).
 *
 * @throws SpoolLockedError when a live process holds the directory.
 */
export function acquireSpoolLock(dir: string, node: SpoolBuiltins): SpoolLock {
  const { fs, path } = node;
  const file = path.join(dir, "lock");
  if (heldHere.has(file)) {
    throw new SpoolLockedError(
      dir,
      { pid: node.pid, host: node.hostname },
      "another audit client of this process",
    );
  }
  const mine: LockContent = {
    pid: node.pid,
    host: node.hostname,
    token: `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`,
  };
  if (!tryCreate(file, mine, node)) {
    const held = readLock(file, node);
    const why = held === undefined ? undefined : liveHolder(file, held, node);
    if (held !== undefined && why !== undefined) throw new SpoolLockedError(dir, held, why);
    takeOver(file, held, mine, node);
  }
  heldHere.add(file);
  const heartbeat = setInterval(() => {
    const now = new Date();
    try {
      fs.utimesSync(file, now, now);
    } catch {
      // The next heartbeat tries again; a lock another host sees as stale is its risk to judge.
    }
  }, heartbeatMs);
  heartbeat.unref?.();
  return {
    release() {
      clearInterval(heartbeat);
      heldHere.delete(file);
      if (readLock(file, node)?.token === mine.token) fs.rmSync(file, { force: true });
    },
  };
}

function tryCreate(file: string, content: LockContent, { fs }: SpoolBuiltins): boolean {
  try {
    fs.writeFileSync(file, JSON.stringify(content), { flag: "wx" });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
}

function readLock(file: string, { fs }: SpoolBuiltins): LockContent | undefined {
  try {
    const content = JSON.parse(fs.readFileSync(file, "utf8")) as Partial<LockContent>;
    return typeof content.pid === "number" && typeof content.host === "string"
      ? { pid: content.pid, host: content.host, token: String(content.token) }
      : undefined;
  } catch {
    // Missing, or torn by a crash while it was written: either way nobody holds it.
    return undefined;
  }
}

/** Why `held` still holds the lock, or undefined when its holder is gone. */
function liveHolder(file: string, held: LockContent, node: SpoolBuiltins): string | undefined {
  if (held.host !== node.hostname) {
    const age = Date.now() - node.fs.statSync(file).mtimeMs;
    return age < staleAfterMs
      ? `its lock was refreshed ${Math.round(age / 1000)} s ago`
      : undefined;
  }
  if (held.pid === node.pid) return undefined;
  try {
    process.kill(held.pid, 0);
    return "that process is running";
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
      ? "that process is running"
      : undefined;
  }
}

/**
 * Replaces a stale lock without a window in which two takers both win: the stale file is first
 * renamed aside (atomic; only one taker gets it) and checked to be the one judged stale, then the
 * new lock is created exclusively.
 */
function takeOver(
  file: string,
  stale: LockContent | undefined,
  mine: LockContent,
  node: SpoolBuiltins,
): void {
  const { fs } = node;
  const aside = `${file}.stale-${mine.token}`;
  try {
    fs.renameSync(file, aside);
    const moved = readLock(aside, node);
    if (stale !== undefined && moved?.token !== stale.token) {
      // Another process took the lock over in between: put its lock back and give way.
      fs.renameSync(aside, file);
      throw new SpoolLockedError(
        path(file, node),
        moved ?? stale,
        "it took the lock over just now",
      );
    }
    fs.rmSync(aside, { force: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  if (!tryCreate(file, mine, node)) {
    const winner = readLock(file, node) ?? { pid: 0, host: "unknown", token: "" };
    throw new SpoolLockedError(path(file, node), winner, "it took the lock over just now");
  }
}

function path(file: string, node: SpoolBuiltins): string {
  return node.path.dirname(file);
}
