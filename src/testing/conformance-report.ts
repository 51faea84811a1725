// The report of the conformance checker, the Provisioning API's and the SCIM service's alike: its
// own module so that both runners build on it without importing each other.

/** The outcome of one check. */
export interface ConformanceResult {
  name: string;
  /** Where the rule comes from: a section of the spec, the platform's behaviour, or the SDK. */
  rule: string;
  /** False when the check failed; true when it passed or ended in a warning. */
  passed: boolean;
  /** Set when the check ended in a warning: printed, not counted as a failure. The advice. */
  warning?: string;
  /**
   * For a check whose name claims an effect on the stored user: `"verified"` when the user was
   * read back, `"status only"` when only the answers' statuses were checked (no `readUser`).
   */
  effects?: "verified" | "status only";
  /** The steps and what each should get, up to the first that failed. */
  expected: string;
  /** What came back at each of those steps. */
  actual: string;
}

/** A user that the suite created and could not delete, and why. */
export interface LeftBehind {
  uuid: string;
  reason: string;
}

/** Every check's result; `passed` when all passed. */
export interface ConformanceReport {
  passed: boolean;
  results: ConformanceResult[];
  /** Whether the checks that claim effects read users back (`readUser` was given). */
  effectsVerified: boolean;
  /**
   * Set when the suite stopped before its end because the application cannot be checked (ping
   * failed, nothing answers, the answers are not the API's): one line that says what to check.
   */
  stoppedEarly?: string;
  /** The users created and not deleted: empty unless a delete failed or the process was killed. */
  leftBehind: LeftBehind[];
  /**
   * The uuids of users it created that the application keeps deactivated (a store with
   * `onDelete: "deactivate"`, read back with the marker `ReadUser` describes): deleted as
   * the platform sees it, so not in `leftBehind`, but their rows stay in the application's
   * database. Empty without `readUser`, which alone can tell.
   */
  deactivated: string[];
}
