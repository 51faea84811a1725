import { type FakeAuditEvent, fakeAuditEventFields } from "../../clients/audit/fake.ts";

// What `mock-api` prints of what arrives: values come from the network, so each is quoted and
// escaped unless plainly safe, and no control character reaches the terminal.

/** The time of day, for the start of a line. */
export function clock(): string {
  return new Date().toTimeString().slice(0, 8);
}

/**
 * One line per event: the action first, then every field. Values come from the network, so they
 * are quoted and escaped unless plainly safe: no control character reaches the terminal.
 */
export function describeEvent(event: FakeAuditEvent): string {
  const { action, fields } = fakeAuditEventFields(event);
  const shown = fields.map(([key, value]) => `${printable(key)}=${printable(value)}`);
  return [action === undefined ? "(no action)" : printable(action), ...shown].join(" ");
}

const secretKey = /pass(word)?|secret|token|credential|authorization/i;
const bodyShown = 500;

/**
 * A write's body for its line: JSON compact, with the value of any key that names a secret
 * replaced (the newer API takes none, but a tester's control call might carry one), cut after
 * 500 characters; anything else (a support bundle) by its size. Empty for no body.
 */
export async function describeBody(request: Request): Promise<string> {
  const bytes = new Uint8Array(await request.arrayBuffer());
  if (bytes.length === 0) return "";
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    const type = request.headers.get("content-type");
    return `(${bytes.length} bytes${type === null ? "" : ` of ${printable(type)}`})`;
  }
  const text = escapeControls(
    JSON.stringify(value, (key, inner: unknown) =>
      key !== "" && secretKey.test(key) ? "[redacted]" : inner,
    ),
  );
  return text.length > bodyShown ? `${text.slice(0, bodyShown)}… (${bytes.length} bytes)` : text;
}

export function printable(value: unknown): string {
  if (typeof value === "string" && /^[\w.@:/+-]+$/.test(value)) return value;
  return escapeControls(JSON.stringify(value) ?? String(value));
}

/** JSON escapes C0 controls; C1 controls and line separators are escaped here. */
function escapeControls(json: string): string {
  return json.replace(
    /[\u007f-\u009f\u2028\u2029]/g,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
