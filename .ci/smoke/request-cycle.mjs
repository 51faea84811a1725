// One real request cycle on Bun or Deno: the SDK's store through its public entry.
import { MemoryUserStore } from "platform-integration/provisioning";

const runtime = globalThis.Deno ? `Deno ${Deno.version.deno}` : `Bun ${globalThis.Bun?.version}`;
const store = new MemoryUserStore();
const { created } = await store.upsert({ uuid: "smoke" });
if (!created) throw new Error("store did not create");
console.log(`request cycle ok on ${runtime}`);
