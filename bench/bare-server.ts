import type { RequestListener } from "node:http";

/**
 * The baseline of the provisioning benchmarks: the least a create endpoint can do, by hand. It
 * routes POST /v1/user/create, reads the body, parses it, checks the uuid, merges the record into
 * `users` and answers 201; anything else answers 404, a bad body 400.
 */
export function bareCreateListener(
  users = new Map<string, Record<string, unknown>>(),
): RequestListener {
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
        res.statusCode = 400;
        res.end();
        return;
      }
      if (typeof record?.uuid !== "string" || record.uuid === "") {
        res.statusCode = 400;
        res.end();
        return;
      }
      users.set(record.uuid, { ...users.get(record.uuid), ...record });
      res.statusCode = 201;
      res.end();
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
