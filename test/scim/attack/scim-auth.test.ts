// Attack: token handling. Every malformed, missing or near-miss credential is a 401 in the SCIM
// error form, before any store call; discovery needs the token too.
import { describe, expect, it } from "vitest";
import { MemoryUserStore } from "../../../src/provisioning/index.ts";
import { createScimHandler } from "../../../src/scim/index.ts";
import { clientOf, token } from "./support.ts";

function counting() {
  let calls = 0;
  const store = new Proxy(new MemoryUserStore(), {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        calls++;
        return value.apply(target, args);
      };
    },
  });
  return { store, calls: () => calls };
}

describe("the bearer token", () => {
  const wrong: [string, Record<string, string>][] = [
    ["no Authorization", { authorization: "" }],
    ["an empty bearer", { authorization: "Bearer " }],
    ["a prefix of the token", { authorization: `Bearer ${token.slice(0, -1)}` }],
    ["the token and more", { authorization: `Bearer ${token}x` }],
    ["the token twice", { authorization: `Bearer ${token}${token}` }],
    ["another scheme", { authorization: `Basic ${token}` }],
    ["Okta's spec test", { authorization: "non-token" }],
    ["the token alone", { authorization: token }],
    ["two headers folded", { authorization: `Bearer wrong, Bearer ${token}` }],
    ["the token in another case", { authorization: `Bearer ${token.toUpperCase()}` }],
    ["a token with a NUL", { authorization: `Bearer ${token}\u0000`.replace("\u0000", "%00") }],
  ];
  it.each(wrong)(
    "%s answers 401 in the SCIM error form, before the store",
    async (_name, headers) => {
      const { store, calls } = counting();
      const scim = clientOf(createScimHandler({ store, token }));
      for (const path of ["/Users", "/ServiceProviderConfig", "/Groups", "/Users/x"]) {
        const answer = await scim("GET", path, undefined, headers);
        expect(answer.status, path).toBe(401);
        expect(answer.body).toMatchObject({
          schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"],
          status: "401",
        });
        expect(answer.headers.get("www-authenticate")).toMatch(/^Bearer/);
      }
      expect(calls()).toBe(0);
    },
  );

  it("the scheme in any case, and tabs, are read", async () => {
    const scim = clientOf(createScimHandler({ store: new MemoryUserStore(), token }));
    expect(
      (await scim("GET", "/Users", undefined, { authorization: `bEaReR\t${token}` })).status,
    ).toBe(200);
  });

  it("a token read from a file with its newline is refused at construction, not on every request", () => {
    // `token: readFileSync("token.txt", "utf8")` keeps the trailing newline: no header can ever
    // carry it, so every request would answer 401 with nothing saying why.
    expect(() => createScimHandler({ store: new MemoryUserStore(), token: `${token}\n` })).toThrow(
      TypeError,
    );
  });

  it("there is no open default", () => {
    expect(() => createScimHandler({ store: new MemoryUserStore() } as never)).toThrow(TypeError);
    expect(() => createScimHandler({ store: new MemoryUserStore(), token: "" })).toThrow(TypeError);
    expect(() => createScimHandler({ store: new MemoryUserStore(), token: "   " })).toThrow(
      TypeError,
    );
  });
});

describe("HEAD", () => {
  it("answers GET's status and headers without a body, through fetch", async () => {
    const handler = createScimHandler({ store: new MemoryUserStore(), token });
    for (const path of ["/Users", "/ServiceProviderConfig", "/Users/nobody"]) {
      const response = await handler.fetch(
        new Request(`http://127.0.0.1/scim/v2${path}`, {
          method: "HEAD",
          headers: { authorization: `Bearer ${token}` },
        }),
      );
      expect(response.status, path).toBe(path === "/Users/nobody" ? 404 : 200);
      expect(response.headers.get("content-type")).toMatch(/^application\/scim\+json/);
      expect(await response.text(), path).toBe("");
    }
  });
});
