import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  httpUrlProblem,
  joinUrl,
  normalizeApiBaseUrl,
  normalizeBaseUrl,
  parseHttpUrl,
  pathSegment,
  redactUrl,
  trimTrailingSlashes,
} from "../../src/internal/url.ts";

describe("normalizeBaseUrl and joinUrl", () => {
  it("keeps the origin and path, drops trailing slashes, and joins a path under it", () => {
    expect(normalizeBaseUrl("https://host.test")).toBe("https://host.test");
    expect(normalizeBaseUrl("https://host.test/")).toBe("https://host.test");
    expect(normalizeBaseUrl(" http://host.test:8080/ldap/auth// ")).toBe(
      "http://host.test:8080/ldap/auth",
    );
    expect(normalizeBaseUrl(new URL("HTTPS://HOST.test:443/a"))).toBe("https://host.test/a");
    expect(joinUrl(normalizeBaseUrl("https://host.test/prefix/"), "/v1/users")).toBe(
      "https://host.test/prefix/v1/users",
    );
  });

  it("says what is wrong, never repeating a password", () => {
    expect(() => normalizeBaseUrl("host.test:8080")).toThrow(
      "must be an http(s) URL, not host.test:",
    );
    expect(() => normalizeBaseUrl("/relative")).toThrow("is not an absolute URL: /relative");
    expect(() => normalizeBaseUrl("ftp://host.test")).toThrow("not ftp:");
    expect(() => normalizeBaseUrl("https://host.test/?a=1")).toThrow("query or fragment");
    expect(() => normalizeBaseUrl("https://host.test/#top")).toThrow("query or fragment");
    const error = (() => {
      try {
        return normalizeBaseUrl("https://user:s3cret@host.test");
      } catch (caught) {
        return caught as Error;
      }
    })();
    expect(error).toBeInstanceOf(TypeError);
    expect(String(error)).toContain("user name or password");
    expect(String(error)).not.toContain("s3cret");
  });

  it("takes a platform API's base URL as an origin only, naming the origin when a path is given", () => {
    expect(normalizeApiBaseUrl("https://host.test:8443//")).toBe("https://host.test:8443");
    expect(normalizeApiBaseUrl(new URL("HTTP://HOST.test:80/"))).toBe("http://host.test");
    expect(() => normalizeApiBaseUrl("https://host.test/version/v1")).toThrow(
      "without a path (the platform's APIs have none): got https://host.test/version/v1, use https://host.test",
    );
    expect(() => normalizeApiBaseUrl("https://host.test/a/?q")).toThrow("query or fragment");
  });

  it("shows a URL in messages without its credentials, query or fragment", () => {
    expect(redactUrl("https://u:p@host.test/a?b#c")).toBe("https://host.test/a?…");
    // A `?` or `/` before the last `@`: a password holding one, or a path holding an `@`; the
    // text cannot tell, so everything up to it goes, marked.
    expect(redactUrl("https://u:pa?ss@host.test/a")).toBe("https://…@host.test/a");
    expect(redactUrl("https://host.test/a@b")).toBe("https://…@b");
    expect(redactUrl("https://host.test/a?token=s3cret")).toBe("https://host.test/a?…");
    expect(redactUrl("ldap://cn=admin:pw@h:389/dc=x??sub?(uid=*)")).toBe("ldap://h:389/dc=x?…");
    // Text the URL parser refuses loses the same parts.
    expect(redactUrl("http://us er:pw@host/x?token=s3cret")).toBe("http://host/x?…");
    expect(redactUrl("no url?token=s3cret")).toBe("no url?…");
  });

  // Catches: credentials kept when the password holds "/" (the old pattern stopped at the first
  // "/"), a leading space that skipped redaction, a parser that puts the secret in the path.
  it.each([
    ["http://svc:ab/cd+Secret@app.example/v1", "http://…@app.example/v1"],
    ["http://svc:80/cd+Secret@app.example/v1", "http://…@app.example/v1"],
    ["http://svc:ab\\cdSecret@app.example:99999/", "http://…@app.example:99999/"],
    [" http://svc:Secret@app.example:99999/", "http://app.example:99999/"],
    ["\u0000\u001f http://svc:Secret@app.example/", "http://app.example/"],
    ["HTTP://svc:Se\ncr\tet@h/", "HTTP://h/"],
    ["ht\ntp://svc:Secret@h/", "http://h/"],
    ["x <http://svc:Secret@h/>", "x <http://h/>"],
    ["http:svc:Secret@h", "http:h"],
    ["http:/\\svc:Secret@h/p", "http:/\\h/p"],
    ["ldap://svc:Se@cret@h:389/", "ldap://h:389/"],
    ["https://svc:Secret@h/a?x=svc:Secret@y", "https://…@y"],
    ["http://a/ http://svc:Secret@h/", "http://…@h/"],
  ])("never leaks the userinfo of %j", (value, shown) => {
    expect(redactUrl(value)).toBe(shown);
    expect(redactUrl(value)).not.toMatch(/svc|Se.?cr.?et/);
  });

  it("never leaks a password, whatever it holds", () => {
    const part = fc.string({
      unit: fc.constantFrom("a", "/", "?", "#", "@", "\\", ":", " ", "%", "\n"),
    });
    fc.assert(
      fc.property(
        fc.constantFrom("http://", "https://", "HTTPS://", " ldap://", "ldaps:\\\\", "http:/"),
        part,
        part,
        fc.constantFrom("host.test", "host.test:8443/path", "[::1]:3000/a?b#c", ""),
        (scheme, before, after, host) => {
          const shown = redactUrl(`${scheme}svcuser:${before}S3cr3t${after}@${host}`);
          expect(shown).not.toContain("S3cr3t");
          expect(shown).not.toContain("svcuser");
        },
      ),
    );
  });

  // Catches: a refused base URL whose message repeats the token of its query.
  it("never repeats a base URL's query or fragment in the message that refuses it", () => {
    for (const value of [
      "https://host.test/?token=s3cret",
      "https://host.test/#access_token=s3cret",
    ]) {
      expect(() => normalizeBaseUrl(value)).toThrow("must not have a query or fragment");
      expect(() => normalizeApiBaseUrl(value)).not.toThrow(/s3cret/);
    }
    expect(() => normalizeBaseUrl("https://u:p@host.test?token=s3cret")).not.toThrow(/s3cret|:p@/);
  });
});

describe("pathSegment", () => {
  it("encodes every character that would end or escape the segment", () => {
    expect(pathSegment("username", "a/b?c#d%e f")).toBe("a%2Fb%3Fc%23d%25e%20f");
    expect(pathSegment("username", "...")).toBe("...");
  });

  it("refuses . and .., which a URL would resolve even encoded, and what is not a string", () => {
    expect(() => pathSegment("username", "..")).toThrow(RangeError);
    expect(() => pathSegment("username", ".")).toThrow(RangeError);
    expect(() => pathSegment("username", "")).toThrow("username must be a non-empty string");
    expect(() => pathSegment("name", 7)).toThrow("name must be a non-empty string, got number");
  });
});

describe("trimTrailingSlashes", () => {
  it("drops every slash at the end and only there", () => {
    expect(trimTrailingSlashes("/ldap/auth//")).toBe("/ldap/auth");
    expect(trimTrailingSlashes("https://app.test/ldap/")).toBe("https://app.test/ldap");
    expect(trimTrailingSlashes("/a//b")).toBe("/a//b");
    expect(trimTrailingSlashes("///")).toBe("");
    expect(trimTrailingSlashes("")).toBe("");
    expect(trimTrailingSlashes("/a/b")).toBe("/a/b");
  });
});

// The one WHATWG check behind normalizeBaseUrl, the read-user template, the CLI's <url> and
// doctor's --provisioner and --read-user.
describe("httpUrlProblem and parseHttpUrl", () => {
  it.each([
    ["https://host.test/a?b#c", undefined],
    [" http://10.0.0.5:3000 ", undefined],
    ["host.test:8080", "not http"],
    ["/relative", "not absolute"],
    ["", "not absolute"],
    ["ftp://host.test", "not http"],
    ["http://user@host.test", "credentials"],
    ["http://:pass@host.test", "credentials"],
  ] as const)("%j: %s", (value, problem) => {
    expect(httpUrlProblem(value)).toBe(problem);
    if (problem === undefined) expect(parseHttpUrl(value).href).toBe(new URL(value.trim()).href);
    else expect(() => parseHttpUrl(value)).toThrow(TypeError);
  });

  it("says what is wrong, never repeating a password", () => {
    expect(() => parseHttpUrl("ftp://host.test")).toThrow("must be an http(s) URL, not ftp:");
    expect(() => parseHttpUrl("nope")).toThrow("is not an absolute URL: nope");
    expect(() => parseHttpUrl("http://u:s3cret@host.test/")).toThrow(
      /^must not contain a user name or password: http:\/\/host\.test\/$/,
    );
  });
});
