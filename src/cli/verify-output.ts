import { describeUserDifference, type VerifyReport } from "../platform/verify-users.ts";
import { labelled } from "./table.ts";

/** Differences printed one by one; the rest are counted (`sync --json` lists the first 1,000). */
const shownDifferences = 20;

/**
 * What reading users back found, for `simulate` and `sync` alike: a verdict line that claims no
 * more than was read back, then the first differences, one a line.
 */
export function describeVerifyReport(report: VerifyReport): string {
  const { checked, complete, differenceCount, differences } = report;
  if (differenceCount === 0) {
    return complete
      ? `Verified: all ${checked} users read back match the directory, field by field.\n`
      : `Verification interrupted: the ${checked} users read back so far match the directory.\n`;
  }
  const lines = [
    `Verification failed: ${differenceCount} ${differenceCount === 1 ? "difference" : "differences"} in the ${checked} users read back${complete ? "" : " before the interruption"}:`,
    ...differences
      .slice(0, shownDifferences)
      .map((difference) =>
        labelled("  ", `${difference.uuid}: ${describeUserDifference(difference)}`),
      ),
  ];
  if (differenceCount > shownDifferences) {
    lines.push(`  and ${differenceCount - shownDifferences} more.`);
  }
  return `${lines.join("\n")}\n`;
}

/** Whether the application stored every user as expected, and every one was read back. */
export function verifiedAll(report: VerifyReport): boolean {
  return report.complete && report.differenceCount === 0;
}
