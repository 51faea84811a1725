import type { RequestListener } from "node:http";

/** A record the bare servers accept: parsed JSON with a non-empty string uuid. */
export type BareRecord = Record<string, unknown> & { uuid: string };

/** What a bare server does with a record: store it, synchronously or not (a rejection is a 503). */
export type BareWrite = (record: BareRecord) => void | Promise<void>;

/** The least a store can do: merge the record into `users`, in memory. */
export function mergeInto(users = new Map<string, Record<string, unknown>>()): BareWrite {
  return (record) => {
    users.set(record.uuid, { ...users.get(record.uuid), ...record });
  };
}

/**
 * The baseline of the provisioning benchmarks: the least a create endpoint can do, by hand. It
 * routes POST /v1/user/create, reads the body, parses it, checks the uuid, hands the record to
 * `write` and answers 201 (503 when the write fails); anything else answers 404, a bad body 400.
 * A synchronous write answers at once, without a promise.
 */
export function bareCreateListener(write: BareWrite = mergeInto()): RequestListener {
  return (req, res) => {
    if (req.method !== "POST" || req.url !== "/v1/user/create") {
      res.statusCode = 404;
      res.end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      let record: { uuid?: unknown };
      try {
        record = JSON.parse(Buffer.concat(chunks).toString());
      } catch {
        record = {};
      }
      if (typeof record?.uuid !== "string" || record.uuid === "") {
        res.statusCode = 400;
        res.end();
        return;
      }
      const answer = (status: number) => {
        res.statusCode = status;
        res.end();
      };
      let pending: void | Promise<void>;
      try {
        pending = write(record as BareRecord);
      } catch {
        answer(503);
        return;
      }
      if (pending === undefined) answer(201);
      else
        pending.then(
          () => answer(201),
          () => answer(503),
        );
    });
  };
}

/**
 * The same baseline for Web-standard servers: a `(Request) => Response` handler doing the work of
 * {@link bareCreateListener} (route, read the body as text, parse, check the uuid, merge, 201), the
 * fair measure of `handler.fetch` on the same server.
 */
export function bareCreateFetch(
  users = new Map<string, Record<string, unknown>>(),
): (request: Request) => Promise<Response> {
  return async (request) => {
    const url = request.url;
    const path = url.slice(url.indexOf("/", url.indexOf("//") + 2));
    if (request.method !== "POST" || path !== "/v1/user/create") {
      return new Response(null, { status: 404 });
    }
    let record: { uuid?: unknown };
    try {
      record = JSON.parse(await request.text());
    } catch {
      return new Response(null, { status: 400 });
    }
    if (typeof record?.uuid !== "string" || record.uuid === "") {
      return new Response(null, { status: 400 });
    }
    users.set(record.uuid, { ...users.get(record.uuid), ...record });
    return new Response(null, { status: 201 });
  };
}
