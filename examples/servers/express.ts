// The Provisioning API in an Express 5 application, mounted under a prefix, behind the body
// parser the application's own routes need.
// Run: npm run example:express (PORT, HOST and DATABASE_FILE as in main.ts).
import { createServer } from "node:http";
import express from "express";
import { toNodeErrorHandler, toNodeHandler } from "platform-integration/node";
import { createProvisioningHandler } from "platform-integration/provisioning";
import { withReadUserRoute } from "platform-integration/testing";
import { runFromCommandLine } from "./main.ts";
import { listen, type StartOptions } from "./serve.ts";

/** Serves the example: the API under /ldap/auth, the application's routes beside it. */
export function start({ store, readUserRoute, ...address }: StartOptions) {
  const app = express();
  app.disable("x-powered-by");
  // Parses every JSON body, the platform's included: the adapter then uses the parsed value. (Mount
  // the API before it instead, and the API reads its own body, with its own limit and answers.)
  app.use(express.json());
  // Express strips the mount path, so the handler's basePath stays empty. What express.json()
  // rejects on the API's routes is answered as the API answers it, in JSON, and never logged
  // with its body (a user record holds a password).
  let provisioning = createProvisioningHandler({ store });
  // A test aid, off by default: GET /v1/user/:uuid for `conformance --read-user`.
  if (readUserRoute) provisioning = withReadUserRoute(provisioning, store);
  app.use("/ldap/auth", toNodeHandler(provisioning), toNodeErrorHandler(provisioning));

  // The application's own routes.
  app.get("/", (_req, res) => {
    res.type("text").send("Hello from Express. The Provisioning API is at /ldap/auth.\n");
  });
  app.post("/api/echo", (req, res) => {
    res.json({ received: req.body });
  });

  return listen(createServer(app), address, "/ldap/auth");
}

if (import.meta.main) await runFromCommandLine(start);
