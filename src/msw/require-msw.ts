// load-msw.ts for the CommonJS build (tsup.config.ts puts it in that module's place): msw, an ES
// module, is required (Node 22.12 and later require ES modules), and a missing msw is told with
// the package to install.
import type * as Msw from "msw";
import { mswMissing } from "./msw-missing.ts";

/** The msw module. */
export let msw: typeof Msw;
try {
  msw = require("msw");
} catch (error) {
  throw mswMissing(error);
}
