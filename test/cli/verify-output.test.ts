import { describe, expect, it } from "vitest";
import { describeVerifyReport, verifiedAll } from "../../src/cli/verify-output.ts";
import type { UserDifference, VerifyReport } from "../../src/testing/index.ts";

const report = (fields: Partial<VerifyReport>): VerifyReport => ({
  checked: 30,
  complete: true,
  differenceCount: 0,
  differences: [],
  ...fields,
});

describe("describeVerifyReport", () => {
  it("claims a match only for a complete read-back without differences", () => {
    expect(describeVerifyReport(report({}))).toBe(
      "Verified: all 30 users read back match the directory, field by field.\n",
    );
    expect(verifiedAll(report({}))).toBe(true);
    const interrupted = report({ complete: false });
    expect(describeVerifyReport(interrupted)).toBe(
      "Verification interrupted: the 30 users read back so far match the directory.\n",
    );
    expect(verifiedAll(interrupted)).toBe(false);
  });

  it("names each difference in one line, the first 20, and counts the rest", () => {
    const differences: UserDifference[] = Array.from({ length: 25 }, (_, index) => ({
      uuid: `u${index}`,
      field: "email",
      expected: `user${index}@example.test`,
    }));
    differences[1] = { uuid: "u1", field: "user", problem: "still stored" };
    const text = describeVerifyReport(
      report({ complete: false, differenceCount: 1200, differences }),
    );
    expect(verifiedAll(report({ differenceCount: 1, differences }))).toBe(false);
    expect(text.split("\n")).toEqual([
      "Verification failed: 1200 differences in the 30 users read back before the interruption:",
      '  u0: email: expected "user0@example.test", found absent',
      "  u1: still stored",
      ...differences
        .slice(2, 20)
        .map(
          (_, index) =>
            `  u${index + 2}: email: expected "user${index + 2}@example.test", found absent`,
        ),
      "  and 1180 more.",
      "",
    ]);
  });
});
