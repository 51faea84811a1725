// The Provisioning API in an Express 5 application, mounted under a prefix, behind the body
// parser the application's own routes need.
// Run: npm run example:express (PORT, HOST and DATABASE_FILE as in main.ts).
import { createServer } from "node:http";
import express, { type ErrorRequestHandler } from "express";
import { toNodeHandler } from "platform-integration/node";
import {
  createProvisioningHandler,
  type ProvisioningErrorBody,
} from "platform-integration/provisioning";
import { runFromCommandLine } from "./main.ts";
import { listen, type StartOptions } from "./serve.ts";

/** Serves the example: the API under /ldap/auth, the application's routes beside it. */
export function start({ store, ...address }: StartOptions) {
  const app = express();
  app.disable("x-powered-by");
  // Parses every JSON body, the platform's included: the adapter then uses the parsed value. (Mount
  // the API before it instead, and the API reads its own body, with its own limit and answers.)
  app.use(express.json());
  // Express strips the mount path, so the handler's basePath stays empty.
  app.use("/ldap/auth", toNodeHandler(createProvisioningHandler({ store })));

  // The application's own routes.
  app.get("/", (_req, res) => {
    res.type("text").send("Hello from Express. The Provisioning API is at /ldap/auth.\n");
  });
  app.post("/api/echo", (req, res) => {
    res.json({ received: req.body });
  });

  app.use(onError);

  return listen(createServer(app), address, "/ldap/auth");
}

// What express.json() rejects never reaches the API's handler: its errors come here, the
// platform's requests included. Answer them as the API answers, in JSON, without the body that
// Express's default handler would log (a user record holds a password).
const bodyParserErrors = new Map<string, [status: number, body: ProvisioningErrorBody]>([
  ["entity.parse.failed", [400, { error: "invalid_json", message: "The body is not valid JSON." }]],
  ["entity.too.large", [413, { error: "payload_too_large", message: "The body is too large." }]],
  ["charset.unsupported", [415, { error: "unsupported_media_type", message: "Send UTF-8." }]],
  [
    "encoding.unsupported",
    [415, { error: "unsupported_media_type", message: "This Content-Encoding is not supported." }],
  ],
]);

const onError: ErrorRequestHandler = (error, _req, res, _next) => {
  const known = bodyParserErrors.get(error?.type);
  if (known) {
    res.status(known[0]).json(known[1]);
    return;
  }
  console.error(error);
  res.status(500).json({ error: "internal_error", message: "Something went wrong." });
};

if (import.meta.main) await runFromCommandLine(start);
