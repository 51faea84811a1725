import { hostname } from "node:os";
import { crc32 } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { spoolBuiltins } from "../../../../src/clients/audit/spool/node-builtins.ts";

const getBuiltinModule = process.getBuiltinModule;
afterEach(() => {
  process.getBuiltinModule = getBuiltinModule;
});

describe("spoolBuiltins", () => {
  it("reaches node:fs, node:path, the host name, the pid and zlib's CRC-32", () => {
    const node = spoolBuiltins();
    expect(node).toMatchObject({ pid: process.pid, hostname: hostname() });
    expect(node.fs.existsSync).toBeTypeOf("function");
    expect(node.path.join("a", "b")).toBe(`a${node.path.sep}b`);
    expect(node.crc32(Buffer.from("audit"))).toBe(crc32("audit"));
  });

  it("refuses a runtime without process.getBuiltinModule, or without zlib.crc32", () => {
    const message = /needs node:fs and zlib.crc32/;
    process.getBuiltinModule = undefined as unknown as typeof getBuiltinModule;
    expect(() => spoolBuiltins()).toThrow(message);
    process.getBuiltinModule = ((id: string) =>
      id === "node:zlib" ? {} : getBuiltinModule(id)) as typeof getBuiltinModule;
    expect(() => spoolBuiltins()).toThrow(message);
  });
});
