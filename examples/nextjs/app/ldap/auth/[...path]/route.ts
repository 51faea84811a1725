// The Provisioning API as a Next.js App Router route handler: every path under /ldap/auth.
// Next.js calls each export with the Web Request (and a context the handler does not need).
import { handler } from "../../../../lib/provisioning.ts";

export const GET = handler.fetch;
export const HEAD = handler.fetch;
export const POST = handler.fetch;
export const DELETE = handler.fetch;
