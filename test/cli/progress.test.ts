import { describe, expect, it } from "vitest";
import { createProgress } from "../../src/cli/progress.ts";
import { createFakeIo } from "../support/fake-io.ts";

describe("createProgress", () => {
  it("redraws a terminal bar of constant length, short of the last column, once per percent", () => {
    const io = createFakeIo({ tty: true, columns: 50 });
    const progress = createProgress(io, "sync");
    for (let done = 1; done <= 100_000; done++) progress.update(done, 100_000);
    progress.finish();
    const frames = io.out.split("\r").slice(1);
    expect(frames).toHaveLength(101);
    expect(frames[0]).toBe(`sync [${"-".repeat(22)}]   0%       1/100000`);
    for (const frame of frames) expect(frame.trimEnd()).toHaveLength(49);
    expect(frames.at(-1)).toBe(`sync [${"#".repeat(22)}] 100%  100000/100000\n`);
  });

  it("writes nothing for an empty task, and no newline when nothing was drawn", () => {
    const io = createFakeIo({ tty: true });
    const progress = createProgress(io, "sync");
    progress.update(0, 0);
    progress.finish();
    expect(io.out).toBe("");
  });
});
