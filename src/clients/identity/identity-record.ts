import * as z from "zod/mini";
import { type RecordOf, wireRecord } from "../integration-api/wire-record.ts";

// The Identity API's records, defined once: the client decodes with them (read-identity.ts),
// the fake Identity API encodes with them (src/clients/identity/fake.ts). The API is written
// in Go: keys match case-insensitively when they do not match exactly, and an unset list or map
// may come as `null`, read as absent.

const go = { nullAsAbsent: true, caseInsensitive: true } as const;

// Each record's shape is a constant of its own, and the public interfaces (read-identity.ts)
// are its zod output: the ./identity entry's declarations then name only zod and these shapes,
// nothing of the internal record helpers, which the build shares with ./testing (TS2742).

/** The fields of an enabled LDAP source. */
export const identitySourceShape = {
  /** The LDAP server's host name. */
  hostname: z.string(),
  /** The base DN searched for users, e.g. `dc=example,dc=com`. */
  baseDn: z.string(),
};

/** An enabled LDAP source (`{"hostname","base_dn"}`). */
export const identitySourceRecord = /* @__PURE__ */ wireRecord(identitySourceShape, go);

/** GET /identity/v1/sources: `{"sources":[...]}`, enabled sources only; `null` for none. */
export const identitySourcesRecord = /* @__PURE__ */ wireRecord(
  {
    sources: z._default(z.array(identitySourceRecord.codec, { error: "is not an array" }), []),
  },
  go,
);

/**
 * LDAP attributes: each name (lower-cased, as LDAP names are case-insensitive) maps to its values,
 * always an array, even for one value.
 */
export type IdentityAttributes = Record<string, string[]>;

// The platform documents that it never sends the password attribute; if a misconfigured
// directory did, an application that logs the user object would log a hash of it.
const passwordAttributes = new Set(["userpassword", "unicodepwd"]);

/**
 * A map of attribute name to values. A lone string reads as one value (the docs once called the
 * field an array; the wire has always been string to string[]); names are lower-cased, values of
 * names that differ only in case merged, and `userPassword` and `unicodePwd` dropped. Built with
 * Object.fromEntries, so a `__proto__` name stays a plain key.
 */
const attributes = z._default(
  z.codec(z.unknown(), z.custom<IdentityAttributes>(), {
    decode: (wire, context) => {
      if (typeof wire !== "object" || wire === null || Array.isArray(wire)) {
        context.issues.push({ code: "custom", message: "is not an object", input: wire });
        return z.NEVER;
      }
      const merged = new Map<string, string[]>();
      for (const [name, value] of Object.entries(wire)) {
        const values = typeof value === "string" ? [value] : value;
        if (!Array.isArray(values) || !values.every((item) => typeof item === "string")) {
          const message = "is not a list of strings";
          context.issues.push({ code: "custom", message, input: value, path: [name] });
          return z.NEVER;
        }
        const key = name.toLowerCase();
        if (passwordAttributes.has(key)) continue;
        merged.set(key, [...(merged.get(key) ?? []), ...(values as string[])]);
      }
      return Object.fromEntries(merged);
    },
    encode: (value) => value,
  }),
  {},
);

/** The Identity API's keys are PascalCase, `DN` and `ID` upper-case. */
const pascalCase = { rule: (name: string) => `${name[0]?.toUpperCase()}${name.slice(1)}` };

/** The fields of a directory group. */
export const identityGroupShape = {
  dn: z.string(),
  /** The group's id; a string even when numeric ("501"), as the platform sends it. */
  id: z.codec(z.union([z.string(), z.int()]), z.string(), {
    decode: (id) => String(id),
    encode: (id) => id,
  }),
  name: z.string(),
  attributes,
};

/** A directory group the user belongs to (`{"DN","ID","Name","Attributes"}`). */
export const identityGroupRecord = /* @__PURE__ */ wireRecord(identityGroupShape, {
  ...go,
  ...pascalCase,
  names: { dn: "DN", id: "ID" },
});

/** The fields of the login and user body. */
export const identityUserShape = {
  /** The user's distinguished name. */
  dn: z.string(),
  /** The username, per the platform's `ldap_username_field` setting (uid, sAMAccountName...). */
  username: z.string(),
  /** The user's attributes; `userPassword` and `unicodePwd` are dropped, should a directory send them. */
  attributes,
  groups: z._default(z.array(identityGroupRecord.codec, { error: "is not an array" }), []),
};

/** The login and user body (`{"DN","Username","Attributes","Groups"}`). */
export const identityUserRecord = /* @__PURE__ */ wireRecord(identityUserShape, {
  ...go,
  ...pascalCase,
  names: { dn: "DN" },
});

/** GET /identity/v1/user/:username/exists: `true` or `false` as text/plain. */
export const identityExistsSchema = z.codec(z.enum(["true", "false"]), z.boolean(), {
  decode: (text) => text === "true",
  encode: (exists) => (exists ? "true" : "false"),
});

/** A directory group, as {@link identityGroupRecord} reads it. */
export type IdentityGroupRecord = RecordOf<typeof identityGroupRecord.shape>;
