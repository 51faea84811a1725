// Attack 3: dateTime filters "compared chronologically" (A13) through Date.parse. docs/scim.md
// and evaluate.ts say text that is not a date compares as text; V8's Date.parse reads "3" or
// "1 2" as dates in the server's local time zone, and a dateTime without an offset too: the
// answer to one filter then depends on the server's TZ.
import { afterEach, describe, expect, it } from "vitest";
import { MemoryUserStore } from "../../../src/provisioning/index.ts";
import { createScimHandler } from "../../../src/scim/index.ts";
import { clientOf, token } from "../attack/support.ts";

const savedTz = process.env.TZ;
afterEach(() => {
  if (savedTz === undefined) delete process.env.TZ;
  else process.env.TZ = savedTz;
});

const filter = (text: string) => `/Users?filter=${encodeURIComponent(text)}`;

async function oneUserAt(stamp: string) {
  const scim = clientOf(createScimHandler({ store: new MemoryUserStore({}), token }));
  // The clock is the handler's; meta.created is read back and the filters are built on it.
  await scim("POST", "/Users", { userName: "dated" });
  const created = (await scim("GET", "/Users")).body.Resources[0].meta.created as string;
  return { scim, created, stamp };
}

describe("dateTime filters", () => {
  it("a filter value that is not an xsd:dateTime is compared as text (or refused), not read by Date.parse", async () => {
    const { scim } = await oneUserAt("");
    // As text "20…" lt "3"; as V8's date "3" is 1 March 2001, earlier than any created.
    const answer = await scim("GET", filter('meta.created gt "3"'));
    expect([400, 0]).toContain(answer.status === 400 ? 400 : answer.body.totalResults);
  });

  it("the same filter gives the same users whatever the server's time zone", async () => {
    const { scim, created } = await oneUserAt("");
    // created, written without its offset: an hour ahead of it, as a local time.
    const at = new Date(Date.parse(created) + 3600_000).toISOString().slice(0, 19);
    const query = filter(`meta.created lt "${at}"`);
    process.env.TZ = "UTC";
    const inUtc = (await scim("GET", query)).body.totalResults;
    process.env.TZ = "Pacific/Kiritimati"; // UTC+14
    const inKiritimati = (await scim("GET", query)).body.totalResults;
    expect(inKiritimati).toBe(inUtc);
  });
});
