import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  isOverLimit,
  resultCode,
  sizeLimitFix,
  toDirectoryError,
} from "../../src/ldap/ldap-errors.ts";
import { DirectoryError } from "../../src/sync/source.ts";

const ldap = { url: "ldap://reader:secret@directory.example:389" };
const ldapError = (code: number, message: string) => Object.assign(new Error(message), { code });

describe("LDAP result codes", () => {
  it("tells a search over the account's limits (size, administrative) from any other result", () => {
    expect(isOverLimit(resultCode.sizeLimitExceeded)).toBe(true);
    expect(isOverLimit(resultCode.adminLimitExceeded)).toBe(true);
    for (const code of [0, 3, 12, 32, 50, "4", undefined]) expect(isOverLimit(code)).toBe(false);
  });

  it("are numbered in one file of src/ldap: no other file gives a result code a name", () => {
    const folder = new URL("../../src/ldap/", import.meta.url);
    const naming = readdirSync(folder).filter(
      (file) =>
        file !== "ldap-errors.ts" &&
        /\b(?:sizeLimitExceeded|adminLimitExceeded|insufficientAccess\w*|noSuchObject)\s*=/.test(
          readFileSync(new URL(file, folder), "utf8"),
        ),
    );
    expect(naming).toEqual([]);
  });
});

describe("toDirectoryError", () => {
  it("makes a paged read over the size limit fatal, with the fix for each kind of directory", () => {
    const error = toDirectoryError(ldapError(4, "Size Limit Exceeded Code: 0x4"), ldap, true);
    expect(error).toBeInstanceOf(DirectoryError);
    expect(error.fatal).toBe(true);
    expect(error.message).toBe(
      `LDAP ldap://directory.example:389: ${sizeLimitFix} (LDAP result 4: Size Limit Exceeded)`,
    );
    expect(toDirectoryError(ldapError(11, "Admin Limit Exceeded"), ldap, true).fatal).toBe(true);
  });

  it("leaves a result that a retry may change retryable, and the password out of the message", () => {
    const error = toDirectoryError(ldapError(51, "Busy"), ldap, true);
    expect(error.fatal).toBe(false);
    expect(error.message).not.toContain("secret");
  });
});
