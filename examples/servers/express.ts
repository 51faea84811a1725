// The Provisioning API in an Express 5 application, mounted under a prefix, ahead of the body
// parser the application's own routes need.
// Run: npm run example:express (PORT, HOST and DATABASE_FILE as in main.ts).
import { createServer } from "node:http";
import express from "express";
import { toNodeErrorHandler, toNodeHandler } from "platform-integration/node";
import { createProvisioningHandler } from "platform-integration/provisioning";
import { createScimHandler } from "platform-integration/scim";
import { withReadUserRoute } from "platform-integration/testing";
import { runFromCommandLine } from "./main.ts";
import { listen, type StartOptions, scimStore } from "./serve.ts";

/** Serves the example: the API under /ldap/auth, the application's routes beside it. */
export function start({ store, readUserRoute, scimToken, ...address }: StartOptions) {
  const app = express();
  app.disable("x-powered-by");
  // The API first, before any body parser: it reads its own body, up to its own bodyLimit (1 MiB;
  // express.json()'s 100 kB would refuse an Active Directory entry with a photo), keeping numbers
  // as they were written. Express strips the mount path, so the handler's basePath stays empty.
  // The error handler answers, in the API's JSON, what a parser in front would reject, should one
  // be added before it, and never logs the body (a user record holds a password).
  let provisioning = createProvisioningHandler({ store });
  // A test aid, off by default: GET /v1/user/:uuid for `conformance --read-user`.
  if (readUserRoute) provisioning = withReadUserRoute(provisioning, store);
  app.use("/ldap/auth", toNodeHandler(provisioning), toNodeErrorHandler(provisioning));
  // SCIM 2.0 from the same store, for identity providers, also ahead of the body parser; the
  // mount path is stripped, so its basePath is empty (the adapter tells the handler the mount,
  // so Location and meta.location read /scim/v2/Users/…).
  if (scimToken !== undefined) {
    const scim = createScimHandler({ store: scimStore(store), token: scimToken, basePath: "" });
    app.use("/scim/v2", toNodeHandler(scim), toNodeErrorHandler(scim));
  }
  // The application's own routes parse JSON their own way.
  app.use(express.json());

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
