import { createConsoleClient, fetchPlatformCa } from "../../../src/clients/console/index.ts";
import { describeClientBehaviours } from "../client-behaviours.ts";

const text = "text/plain; charset=utf-8";

describeClientBehaviours("console", [
  {
    name: "setStartupStatus()",
    run: (options) => createConsoleClient(options).setStartupStatus("Starting"),
    answer: { status: 204, contentType: text, body: "" },
  },
  {
    name: "option()",
    run: (options) => createConsoleClient(options).option("hostname"),
    answer: { status: 200, contentType: text, body: "platform.test" },
  },
  {
    name: "fetchPlatformCa()",
    run: (options) => fetchPlatformCa(options),
    answer: {
      status: 200,
      contentType: text,
      body: "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
    },
  },
]);
