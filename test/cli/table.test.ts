import { describe, expect, it } from "vitest";
import { formatTable, labelled, wrap } from "../../src/cli/table.ts";

describe("formatTable", () => {
  it("pads columns to the widest cell, counting an emoji as one", () => {
    expect(
      formatTable(
        ["A", "B"],
        [
          ["😀x", "1"],
          ["long cell", "2"],
        ],
      ),
    ).toBe("A          B\n😀x         1\nlong cell  2");
  });

  it("wraps the widest column to fit a width, cutting nothing", () => {
    const table = formatTable(["NAME", "TEXT"], [["short", "a rather long text to wrap"]], 24);
    expect(table).toBe("NAME   TEXT\nshort  a rather long\n       text to wrap");
    for (const line of table.split("\n")) expect(line.length).toBeLessThanOrEqual(24);
  });

  it("fits 80 columns by default", () => {
    const long = "word ".repeat(40).trim();
    const table = formatTable(["A", "B"], [["x", long]]);
    for (const line of table.split("\n")) expect(line.length).toBeLessThanOrEqual(80);
    expect(table.replace(/\s+/g, " ")).toContain(long);
  });
});

describe("wrap and labelled", () => {
  it("breaks at spaces, and inside a word longer than the width", () => {
    expect(wrap("one two three", 7)).toEqual(["one two", "three"]);
    expect(wrap("abcdefghij k", 4)).toEqual(["abcd", "efgh", "ij k"]);
    expect(wrap("", 5)).toEqual([""]);
  });

  it("indents the lines after the first under the text", () => {
    expect(labelled("  got: ", "aaa bbb ccc ddd eee fff ggg hhh iii", 27)).toBe(
      "  got: aaa bbb ccc ddd eee\n       fff ggg hhh iii",
    );
  });
});
