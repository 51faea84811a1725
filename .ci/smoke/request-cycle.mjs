// One real HTTP cycle on Bun.serve or Deno.serve, with handler.fetch from the packed package:
// ping, create, modify, delete, each answered with the spec's status. Runs under `bun` and under
// `deno run --allow-net --allow-env --allow-read`.
import { createProvisioningHandler, MemoryUserStore } from "platform-integration/provisioning";

const runtime = globalThis.Deno ? `Deno ${Deno.version.deno}` : `Bun ${globalThis.Bun?.version}`;
const store = new MemoryUserStore();
const handler = createProvisioningHandler({ store, basePath: "/ldap" });

let origin;
let stop;
if (globalThis.Deno) {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, handler.fetch);
  origin = `http://127.0.0.1:${server.addr.port}`;
  stop = () => server.shutdown();
} else {
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: handler.fetch });
  origin = `http://127.0.0.1:${server.port}`;
  stop = () => server.stop(true);
}

async function expectStatus(method, path, body, status) {
  const response = await fetch(`${origin}/ldap${path}`, {
    method,
    headers: { "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (response.status !== status) {
    throw new Error(`${method} ${path}: expected ${status}, got ${response.status} ${text}`);
  }
}

const uuid = "CN=Zoë/Smoke?#";
try {
  await expectStatus("GET", "/v1/ping", undefined, 204);
  await expectStatus("POST", "/v1/user/create", { uuid, username: "zoe", first_name: "Zoë" }, 201);
  await expectStatus("POST", "/v1/user/modify", { uuid, email: "zoe@example.com" }, 204);
  const user = await store.get(uuid);
  if (user?.firstName !== "Zoë" || user.email !== "zoe@example.com") {
    throw new Error(`the store holds ${JSON.stringify(user)}`);
  }
  await expectStatus("DELETE", `/v1/user/${encodeURIComponent(uuid)}`, undefined, 204);
  await expectStatus("DELETE", `/v1/user/${encodeURIComponent(uuid)}`, undefined, 204);
  await expectStatus("GET", "/v1/nowhere", undefined, 404);
  if ((await store.list()).length !== 0) throw new Error("the delete left the user in the store");
} finally {
  await stop();
}
console.log(`request cycle ok on ${runtime}`);
