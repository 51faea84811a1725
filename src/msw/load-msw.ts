// msw is an optional peer dependency. Imported statically, a missing msw fails the ES module
// while it links, with the resolver's bare ERR_MODULE_NOT_FOUND and before any code here runs:
// so it is loaded here, with a top-level await, and a missing msw is told with the package to
// install, as the ./sqlite and ./ldap entries tell theirs. The CommonJS build, where a top-level
// await cannot be, takes require-msw.ts in this module's place (tsup.config.ts).
import type * as Msw from "msw";
import { mswMissing } from "./msw-missing.ts";

/** The msw module. */
export let msw: typeof Msw;
try {
  msw = await import("msw");
} catch (error) {
  throw mswMissing(error);
}
