import { randomUUID } from "node:crypto";
import express, { type ErrorRequestHandler, type Express, type Request } from "express";
import { type AuditClient, createClientIp, type TrustProxy } from "platform-integration/audit";
import type { VersionClient } from "platform-integration/version";
import { type AuditAction, auditActions } from "./audit-actions.ts";
import { renderUpdateBanner, watchPendingUpdates } from "./pending-updates.ts";

/** A signed-in user, named in audit events by the directory's id (the uuid provisioning gets). */
export interface User {
  id: string;
  username: string;
}

/** What {@link createApp} needs: the two clients, and how it is deployed. */
export interface AppOptions {
  audit: AuditClient<AuditAction>;
  version: VersionClient<"integration">;
  /** Checks a user's credentials: your identity provider (the platform's Identity API). */
  authenticate: (username: string, password: string) => Promise<User | undefined>;
  /**
   * The reverse proxies in front of the app, whose X-Forwarded-For is believed: a hop count or
   * their addresses and ranges. Default: none, so a client cannot choose the address it is audited under.
   */
  trustProxy?: TrustProxy | undefined;
  /** How often the pending updates are refreshed. Default 60 seconds. */
  updatesIntervalMs?: number | undefined;
  /** Told about each failed refresh of the pending updates. Default: a console warning. */
  onVersionError?: ((error: unknown) => void) | undefined;
  /** Stops the background refresh of the pending updates, on shutdown. */
  signal?: AbortSignal | undefined;
}

// A report the app can export; a real app reads its database.
const reports = new Map([["q3-sales", "region,total\nnorth,120\nsouth,98\n"]]);
const maxUsernameLength = 256;
const maxPasswordLength = 1024;

/**
 * The app: a page with a pending-update banner, sign-in, and a report export, each action of a
 * user recorded in the platform's audit log. Taking its clients as arguments lets a test hand it
 * clients of a local fake Integration API.
 */
export function createApp(options: AppOptions): Express {
  const { audit, authenticate } = options;
  // Built once: a mistyped trustProxy stops the app at startup rather than failing each request.
  const ipOf = createClientIp({ trustProxy: options.trustProxy });
  const pending = watchPendingUpdates(options.version, {
    intervalMs: options.updatesIntervalMs ?? 60_000,
    signal: options.signal,
    onError:
      options.onVersionError ??
      ((error) => console.warn(`Pending updates unavailable: ${String(error)}`)),
  });
  // In memory for the example; use your session store.
  const sessions = new Map<string, User>();

  const app = express();
  app.disable("x-powered-by");
  app.use(express.json({ limit: "16kb" }));

  app.get("/", (_req, res) => {
    res.type("html").send(`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Reports</title></head>
<body>
${renderUpdateBanner(pending.latest)}
<h1>Reports</h1>
<p>Sign in with POST /sign-in, then export a report with GET /reports/q3-sales/export.</p>
</body>
</html>
`);
  });

  app.post("/sign-in", async (req, res) => {
    const { username, password } = (req.body ?? {}) as Record<string, unknown>;
    if (
      typeof username !== "string" ||
      typeof password !== "string" ||
      username === "" ||
      username.length > maxUsernameLength ||
      password.length > maxPasswordLength
    ) {
      res.status(400).json({
        error: "invalid_request",
        message: `Send JSON { "username", "password" }: strings, a username of 1 to ${maxUsernameLength} characters.`,
      });
      return;
    }
    const user = await authenticate(username, password);
    if (user === undefined) {
      // The attempted name is what an administrator looks for; the password never leaves here.
      audit.record({
        action: auditActions.signInFailed,
        name: "user.signin",
        title: "User Sign-in Failure",
        description: `Sign-in failed for ${JSON.stringify(username)}`,
        ipAddress: ipOf(req),
      });
      res
        .status(401)
        .json({ error: "invalid_credentials", message: "Wrong username or password." });
      return;
    }
    const token = randomUUID();
    sessions.set(token, user);
    audit.record({
      action: auditActions.signIn,
      name: "user.signin",
      title: "User Sign-in Success",
      description: `${user.id} (${user.username}) signed in`,
      ipAddress: ipOf(req),
    });
    res.json({ token });
  });

  app.get("/reports/:report/export", (req, res) => {
    const user = sessions.get(bearerToken(req) ?? "");
    if (user === undefined) {
      res.status(401).json({
        error: "unauthenticated",
        message: "Sign in, then send Authorization: Bearer <token>.",
      });
      return;
    }
    const report = reports.get(req.params.report);
    if (report === undefined) {
      res.status(404).json({ error: "not_found", message: "No such report." });
      return;
    }
    audit.record({
      action: auditActions.reportExport,
      name: "report.export",
      title: "Report Export",
      description: `${user.id} (${user.username}) exported the report ${req.params.report}`,
      ipAddress: ipOf(req),
    });
    res.type("text/csv").attachment(`${req.params.report}.csv`).send(report);
  });

  app.use((_req, res) => {
    res.status(404).json({ error: "not_found", message: "No such page." });
  });

  const onError: ErrorRequestHandler = (error, _req, res, _next) => {
    // body-parser's errors carry a 4xx status. Their messages can quote the body, password
    // included, so the answer says what was wrong in its own words.
    const status: number =
      Number.isInteger(error?.status) && error.status < 500 ? error.status : 500;
    if (status === 500) console.error(error);
    const [code, message] =
      error?.type === "entity.parse.failed"
        ? ["invalid_json", "The body is not valid JSON."]
        : error?.type === "entity.too.large"
          ? ["too_large", "The body is too large."]
          : status === 500
            ? ["internal_error", "Something went wrong."]
            : ["invalid_request", "The request could not be read."];
    res.status(status).json({ error: code, message });
  };
  app.use(onError);

  return app;
}

function bearerToken(req: Request): string | undefined {
  const match = /^Bearer\s+(\S+)$/i.exec(req.get("authorization") ?? "");
  return match?.[1];
}
