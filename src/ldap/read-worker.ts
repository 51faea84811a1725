// Reads the directory in a worker thread, so that decoding LDAP pages and mapping their entries
// run beside the delivery instead of between its messages. The worker is this very module started
// again (through import.meta.url, as the bin does): whatever file of dist/ the build puts it in,
// that file is the worker's entry, and the check below starts the read there. An application that
// bundles the SDK into its own file would start that file instead: readInWorker says so.
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { DirectoryError, type DirectoryPage, type DirectorySource } from "../sync/source.ts";
import { createLdapSource, type LdapSourceOptions } from "./ldap-source.ts";
import { fromPortableMapping, type PortableMapping, toPortableMapping } from "./mapping.ts";

const marker = "platform-integration/ldap read worker";

/** What the delivery thread asks of a read worker. */
export interface ReadRequest {
  [marker]: true;
  source: Omit<LdapSourceOptions, "mapping" | "contentSync"> & { mapping: PortableMapping };
  uuidsOnly: boolean;
}

/** Worker to delivery thread; the other way, each message is a request for one more page. */
type FromWorker = { page: DirectoryPage } | { done: true } | { failed: string; fatal: boolean };

/**
 * Pages a worker reads ahead of the one being delivered: enough that the delivery never waits on
 * the directory while it is faster than the application, and memory still holds a few pages.
 */
const pagesAhead = 2;

/**
 * The reader's young generation: it allocates a page's entries and drops them once posted, so
 * V8's default (sized from the machine's memory) only adds to the process's peak RSS.
 */
const readerYoungGenerationMb = 8;

if (!isMainThread && (workerData as Partial<ReadRequest> | null)?.[marker] === true) {
  void serveRead(workerData as ReadRequest);
}

/**
 * `source` with its reads run in a worker thread by a source of the same options: the delivery
 * thread only receives mapped pages. Content Sync stays on `source`'s own connection.
 *
 * @throws TypeError when the options cannot cross to a thread: a mapping function of the caller's
 * (only attribute names and the defaults' functions can), or a function in the TLS options.
 */
export function readInWorker(source: DirectorySource, options: LdapSourceOptions): DirectorySource {
  const mapping = toPortableMapping(options.mapping);
  if ("field" in mapping) {
    throw new TypeError(
      `readInWorker cannot take the mapping function of ${mapping.field}: functions do not cross ` +
        "to a thread. Map it by an attribute's name, or leave readInWorker off.",
    );
  }
  const { contentSync: _inThread, ...rest } = options;
  const portable: ReadRequest["source"] = { ...rest, mapping };
  try {
    structuredClone(portable);
  } catch (error) {
    throw new TypeError(
      "readInWorker cannot pass these LDAP options to a thread (a function in ldap.tls?): " +
        "leave readInWorker off to keep them.",
      { cause: error },
    );
  }
  return {
    ...source,
    read: ({ uuidsOnly, signal }) =>
      pagesFromWorker({ [marker]: true, source: portable, uuidsOnly }, signal),
  };
}

/**
 * The pages a read worker posts, one more asked for as each is taken. `entry` is the worker's
 * module: this one, except in the tests of a thread that fails or exits early. Such a thread
 * ends the read with a fatal {@link DirectoryError}, as it would fail again.
 */
export async function* pagesFromWorker(
  request: ReadRequest,
  signal: AbortSignal | undefined,
  entry: URL = new URL(import.meta.url),
): AsyncGenerator<DirectoryPage> {
  signal?.throwIfAborted();
  const received: FromWorker[] = [];
  let wake: (() => void) | undefined;
  const arrived = (message: FromWorker) => {
    received.push(message);
    wake?.();
  };
  const worker = new Worker(entry, {
    workerData: request,
    resourceLimits: { maxYoungGenerationSizeMb: readerYoungGenerationMb },
  });
  worker.on("message", arrived);
  // The thread itself failing (its module would not load, a limit was hit) would fail again.
  const broke = (what: string) =>
    arrived({
      failed: `The LDAP reader thread ${what}: the directory cannot be read in a thread here; leave readInWorker off`,
      fatal: true,
    });
  worker.on("error", (error) => broke(`failed (${error.message})`));
  worker.on("exit", (code) => broke(`exited with ${code} before the read ended`));
  const stop = () => wake?.();
  signal?.addEventListener("abort", stop);
  try {
    for (;;) {
      while (received.length === 0) {
        signal?.throwIfAborted();
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = undefined;
      }
      signal?.throwIfAborted();
      const message = received.shift() as FromWorker;
      if ("done" in message) return;
      if ("failed" in message) {
        throw new DirectoryError(message.failed, { fatal: message.fatal });
      }
      worker.postMessage(null);
      yield message.page;
    }
  } finally {
    signal?.removeEventListener("abort", stop);
    worker.removeAllListeners();
    await worker.terminate();
  }
}

async function serveRead(request: ReadRequest): Promise<void> {
  const port = parentPort as NonNullable<typeof parentPort>;
  let credit = pagesAhead;
  let more: (() => void) | undefined;
  port.on("message", () => {
    credit++;
    more?.();
  });
  const source = createLdapSource({
    ...request.source,
    mapping: fromPortableMapping(request.source.mapping),
  });
  const post = (message: FromWorker) => port.postMessage(message);
  try {
    for await (const page of source.read({ uuidsOnly: request.uuidsOnly })) {
      while (credit === 0) {
        await new Promise<void>((resolve) => {
          more = resolve;
        });
      }
      credit--;
      post({ page });
    }
    post({ done: true });
  } catch (error) {
    // The source's errors are DirectoryErrors that name the server, never the password.
    post({
      failed: error instanceof Error ? error.message : String(error),
      fatal: error instanceof DirectoryError && error.fatal,
    });
  } finally {
    await source.close?.();
  }
}
