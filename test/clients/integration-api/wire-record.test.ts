import { describe, expect, it } from "vitest";
import * as z from "zod/mini";
import { Timestamp } from "../../../src/clients/integration-api/timestamp.ts";
import { timestampCodec, wireRecord } from "../../../src/clients/integration-api/wire-record.ts";

const record = wireRecord({
  releaseSequence: z.int(),
  notes: z.exactOptional(z.string()),
  tags: z._default(z.array(z.string()), []),
  releaseDate: z.exactOptional(timestampCodec()),
});

describe("wireRecord", () => {
  it("derives snake_case wire names, or takes the ones given", () => {
    expect(record.wireNames).toEqual({
      releaseSequence: "release_sequence",
      notes: "notes",
      tags: "tags",
      releaseDate: "release_date",
    });
    const pascal = wireRecord(
      { dn: z.string(), userName: z.string() },
      { rule: (name) => name.toUpperCase(), names: { userName: "Username" } },
    );
    expect(pascal.wireNames).toEqual({ dn: "DN", userName: "Username" });
  });

  it("decodes each field by its schema, leaves absent optional fields out and fills defaults", () => {
    const read = record.read({ release_sequence: 3, release_date: "2020-01-01T00:00:00.1234567Z" });
    expect(read.problems).toEqual([]);
    expect(read.extra).toEqual([]);
    expect(read.value).toEqual({
      releaseSequence: 3,
      tags: [],
      releaseDate: Timestamp.parse("2020-01-01T00:00:00.1234567Z"),
    });
    expect(Object.hasOwn(read.value, "notes")).toBe(false);
  });

  it("reports absent and malformed fields apart, and keeps unknown and refused entries as sent", () => {
    const read = record.read(
      JSON.parse('{"x":1,"notes":5,"__proto__":{"polluted":true},"tags":[]}'),
    );
    expect(read.problems.map(({ wireName, absent }) => [wireName, absent])).toEqual([
      ["release_sequence", true],
      ["notes", false],
    ]);
    expect(read.extra).toEqual([
      ["x", 1],
      ["notes", 5],
      ["__proto__", { polluted: true }],
    ]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("reads Go's null as absent only where the field is optional, and matches keys case-insensitively when asked", () => {
    const go = wireRecord(
      {
        name: z.string(),
        note: z.exactOptional(z.string()),
        list: z._default(z.array(z.string()), []),
      },
      { nullAsAbsent: true, caseInsensitive: true },
    );
    expect(go.read({ NAME: "n", note: null, list: null })).toEqual({
      value: { name: "n", list: [] },
      problems: [],
      // Extra holds keys that are no wire name exactly.
      extra: [["NAME", "n"]],
    });
    expect(go.read({ name: null }).problems).toMatchObject([{ wireName: "name", absent: false }]);
    // An exact match wins over a case-insensitive one.
    expect(go.read({ Name: "other", name: "exact" }).value).toMatchObject({ name: "exact" });
    expect(record.read({ RELEASE_SEQUENCE: 1 }).problems[0]?.absent).toBe(true);
    // Without the option, null is a value like any other: refused by a string.
    expect(record.read({ release_sequence: 1, notes: null }).problems).toMatchObject([
      { wireName: "notes", absent: false },
    ]);
  });

  it("leaves out a field that decodes to undefined, and a fake's undefined value", () => {
    const lenient = wireRecord({
      title: z.codec(z.unknown(), z.optional(z.string()), {
        decode: (value) => (typeof value === "string" ? value : undefined),
        encode: (value) => value,
      }),
    });
    expect(Object.keys(lenient.read({ title: 5 }).value)).toEqual([]);
    expect(Object.keys(record.toWire({ releaseSequence: 1, tags: undefined }))).toEqual([
      "release_sequence",
    ]);
  });

  it("encodes a decoded record back to its wire form, and names a fake's wire values", () => {
    const wire = { release_sequence: 3, tags: ["a"], release_date: "2020-01-01T00:00:00Z" };
    const { value } = record.read(wire);
    expect(record.encode(value as z.output<typeof record.codec>)).toEqual(wire);
    expect(record.toWire({ releaseSequence: 3, notes: "n", releaseDate: "odd text" })).toEqual({
      release_sequence: 3,
      notes: "n",
      release_date: "odd text",
    });
  });

  it("is a zod codec that nests, its issues under the wire names and item indexes", () => {
    const list = z.array(record.codec);
    const decoded = z.safeDecode(list, [{ release_sequence: 1 }, 7, { release_sequence: "x" }]);
    expect(decoded.success).toBe(false);
    expect(decoded.error?.issues.map(({ path, message }) => [path, message])).toEqual([
      [[1], "is not an object"],
      [[2, "release_sequence"], expect.any(String)],
    ]);
    expect(z.decode(list, [{ release_sequence: 1 }])).toEqual([{ releaseSequence: 1, tags: [] }]);
    expect(z.encode(list, [{ releaseSequence: 1, tags: [] }])).toEqual([
      { release_sequence: 1, tags: [] },
    ]);
  });

  it("reads a timestamp losslessly, with the message given for anything else", () => {
    const codec = timestampCodec("bad date");
    expect(z.decode(codec, "2020-01-01T00:00:00.123456789Z").text).toBe(
      "2020-01-01T00:00:00.123456789Z",
    );
    for (const input of ["2020-02-30T00:00:00Z", 5]) {
      expect(z.safeDecode(codec, input as string).error?.issues[0]?.message).toBe("bad date");
    }
  });
});
