// Every SCIM check, in the order the checker runs them: Entra ID's sequence, Okta's, and the
// pagination check (startIndex and count, as Okta's import pages).
import { maxPageBytes, type ScimAnswer, usersQuery } from "./scim-client.ts";
import { entraChecks } from "./scim-entra-checks.ts";
import { oktaChecks } from "./scim-okta-checks.ts";
import { asObject, type ScimCheck, type ScimSession, show } from "./scim-session.ts";
import { create, entraUser, listResources } from "./scim-steps.ts";

/** Pages of at most this many users: Okta imports with count=100. */
const pageLimit = 200;

const pagination: ScimCheck = {
  name: "Pagination: startIndex and count page through every user once, in a stable order",
  rule: "RFC 7644 §3.4.2.4; Okta's import (count and startIndex)",
  async run(s) {
    const ids = new Set<string>();
    for (let index = 0; index < 3; index++) {
      ids.add((await create(s, `create user ${index + 1}`, entraUser(s.mark()))).id);
    }
    const first = await s.call(
      "count",
      { method: "GET", path: usersQuery(undefined, { count: 1 }), maxBytes: maxPageBytes },
      200,
    );
    cutAtTheCap(s, "count", first);
    const { total } = listResources(s, "count", first.body);
    // Small pages where the server holds few users, Okta's pages of 100 where it holds many.
    const count = total <= 20 ? 2 : 100;
    const seen = new Map<string, number>();
    let startIndex = 1;
    for (let page = 1; startIndex <= total && page <= pageLimit; page++) {
      const label = `page startIndex=${startIndex}&count=${count}`;
      const answer = await s.call(
        label,
        {
          method: "GET",
          path: usersQuery(undefined, { startIndex, count }),
          maxBytes: maxPageBytes,
        },
        200,
      );
      cutAtTheCap(s, label, answer);
      const { list, resources } = listResources(s, label, answer.body);
      s.step(
        `${label}: at most ${count} resources, startIndex ${startIndex}`,
        `${label}: ${resources.length} resources, startIndex ${show(list?.startIndex)}`,
        resources.length <= count && list?.startIndex === startIndex,
      );
      if (resources.length === 0) break;
      for (const user of resources) {
        const id = asObject(user)?.id;
        if (typeof id !== "string") continue;
        s.step(
          `${label}: each user once`,
          `${label}: ${id} also on the page at startIndex ${seen.get(id)}`,
          !seen.has(id),
        );
        seen.set(id, startIndex);
      }
      startIndex += resources.length;
    }
    const missing = [...ids].filter((id) => !seen.has(id));
    if (missing.length > 0 && startIndex <= total) {
      s.warn(
        "every page: the 3 users created",
        `the first ${pageLimit} pages: ${seen.size} of ${total} users`,
        `The service holds more users than ${pageLimit} pages of ${count}: the pages read were checked, the rest not.`,
      );
    }
    s.step(
      "every page: the 3 users created",
      `every page: ${missing.length === 0 ? "the 3 users created" : `missing ${missing.join(", ")}`}`,
      missing.length === 0,
    );
  },
};

/**
 * Ends the check as a warning when a page was longer than the read: what was not read cannot be
 * judged, and a long page is no fault of the service (RFC 7644 sets no size on one).
 */
function cutAtTheCap(s: ScimSession, label: string, answer: ScimAnswer): void {
  if (!answer.cutOff) return;
  s.warn(
    `${label}: a ListResponse`,
    `${label}: cut at the cap, longer than ${maxPageBytes / 1024 / 1024} MiB (read up to there)`,
    "The pages read were checked, the rest not: a page this long is not judged.",
  );
}

/** Every SCIM check, Entra's sequence first (its first is the connection test). */
export const scimChecks: ScimCheck[] = [...entraChecks, ...oktaChecks, pagination];
