import { createVersionClient } from "../../../src/clients/version/index.ts";
import { describeClientBehaviours } from "../client-behaviours.ts";

const current = JSON.stringify({
  version: "100",
  release_sequence: 51,
  release_notes: "The release notes",
  release_date: "2015-12-01T00:00:00.0000000Z",
  install_date: "2016-01-01T21:00:00.0000000Z",
});

// Issue 13 asks the Version client, too, never to follow a redirect: a PUT of apply() followed
// to another origin would apply an update there.
describeClientBehaviours("version", [
  {
    name: "current()",
    run: (options) => createVersionClient({ api: "integration", ...options }).current(),
    answer: { status: 200, contentType: "application/json", body: current },
  },
  {
    name: "updates()",
    run: (options) => createVersionClient({ api: "integration", ...options }).updates(),
    answer: { status: 200, contentType: "application/json", body: "[]" },
  },
  {
    name: "apply()",
    run: (options) => createVersionClient({ api: "integration", ...options }).apply(52),
    answer: { status: 204, contentType: "text/plain", body: "" },
  },
]);
