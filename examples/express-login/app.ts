import express, { type ErrorRequestHandler, type Express } from "express";
import type { IdentityClient } from "platform-integration/identity";
import type { LoginThrottle } from "./login-throttle.ts";

/** Where the app writes what happened; never given a password. */
export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** What {@link createLoginApp} needs. */
export interface LoginAppOptions {
  identity: IdentityClient;
  throttle: LoginThrottle;
  logger: Logger;
  /** Whether the initial sync has finished: until then /health answers 503. */
  ready: () => boolean;
}

const maxUsernameLength = 256;
const maxPasswordLength = 1024;

/**
 * A login route on the platform's Identity API. The directory checks the password; the app
 * counts failures and locks an account after too many (the Identity API does not), and answers
 * the same 401 for an unknown user and a wrong password, so that the answer does not tell which
 * usernames exist.
 */
export function createLoginApp({ identity, throttle, logger, ready }: LoginAppOptions): Express {
  const app = express();
  app.disable("x-powered-by");
  app.use(express.json({ limit: "8kb" }));

  app.get("/health", (_req, res) => {
    res.status(ready() ? 200 : 503).json({ ready: ready() });
  });

  app.post("/login", async (req, res) => {
    const { username, password } = (req.body ?? {}) as Record<string, unknown>;
    if (
      typeof username !== "string" ||
      typeof password !== "string" ||
      username.length > maxUsernameLength ||
      password.length > maxPasswordLength
    ) {
      res.status(400).json({ error: "Send { username, password }." });
      return;
    }
    // Checked before the directory is asked: a locked account costs the directory nothing.
    const wait = throttle.retryAfterMs(username);
    if (wait > 0) {
      logger.info("login refused: locked", { username });
      res.set("retry-after", String(Math.ceil(wait / 1000)));
      res.status(429).json({ error: "Too many failed logins. Try again later." });
      return;
    }
    let result: Awaited<ReturnType<IdentityClient["login"]>>;
    try {
      result = await identity.login({ username, password });
    } catch (error) {
      // The SDK's errors never hold the password, so the whole error can be logged.
      logger.error("login unavailable", { username, error: String(error) });
      res.status(503).json({ error: "Sign-in is unavailable. Try again shortly." });
      return;
    }
    if (!result.authenticated) {
      if (result.reason === "missing-credentials") {
        res.status(400).json({ error: "Enter a username and a password." });
        return;
      }
      throttle.recordFailure(username);
      logger.info("login failed", { username });
      res.status(401).json({ error: "Wrong username or password." });
      return;
    }
    throttle.recordSuccess(username);
    const { user } = result;
    logger.info("login", { username: user.username });
    // Start your session here; the directory's groups make a natural role list.
    res.json({ username: user.username, groups: user.groups.map((group) => group.name) });
  });

  const onError: ErrorRequestHandler = (error, _req, res, _next) => {
    const status = (error as { status?: unknown }).status;
    // express.json's rejections (bad JSON, too large) carry their status; never echo the body.
    res.status(typeof status === "number" && status < 500 ? status : 500).json({
      error: "Bad request.",
    });
  };
  app.use(onError);
  return app;
}
