import { createLicenseClient } from "../../../src/clients/license/index.ts";
import { describeClientBehaviours } from "../client-behaviours.ts";

describeClientBehaviours("license", [
  {
    name: "license()",
    run: (options) => createLicenseClient({ api: "integration", ...options }).license(),
    answer: {
      status: 200,
      contentType: "application/json",
      body: '{"license_id":"l","installation_id":"i","fields":[]}',
    },
  },
  {
    name: "field()",
    run: (options) => createLicenseClient({ api: "integration", ...options }).field("max_users"),
    answer: {
      status: 200,
      contentType: "application/json",
      body: '{"field":"max_users","value":"100"}',
    },
  },
]);
