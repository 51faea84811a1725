// Compiled by `npm run typecheck`: each record's type now comes from its zod schema, and these
// assertions pin it to the shape it had when it was written by hand, so that a schema change that
// would change a public type fails the typecheck (and says so in CHANGELOG). vitest itself only
// runs the one runtime check at the end.
import type { JsonObject } from "type-fest";
import { expect, it } from "vitest";
import type { AuditEventField } from "../../../src/clients/audit/audit-event-schema.ts";
import type { AuditEvent } from "../../../src/clients/audit/index.ts";
import type {
  IdentityGroup,
  IdentitySource,
  IdentityUser,
} from "../../../src/clients/identity/identity-records.ts";
import type { Timestamp } from "../../../src/clients/integration-api/timestamp.ts";
import type {
  License,
  LicenseField,
  LicenseFieldValue,
  LicenseValue,
} from "../../../src/clients/license/license-records.ts";
import type {
  CurrentVersion,
  VersionUpdate,
} from "../../../src/clients/version/version-records.ts";
import type { FakeAuditEvent } from "../../../src/testing/fake-audit-api.ts";
import type { FakeStartupStatus } from "../../../src/testing/fake-console-api.ts";
import type { FakeLicense, FakeLicenseField } from "../../../src/testing/fake-license-api.ts";
import type { FakeCurrentVersion } from "../../../src/testing/fake-version-api.ts";

/** True when A and B are the same type, optional and readonly modifiers included. */
type Same<A, B> =
  (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
/** Spreads an interface into a plain object type, so that Same compares members. */
type Flat<T> = { [Key in keyof T]: T[Key] };

interface HandWrittenCurrentVersion {
  version: string;
  releaseSequence: number;
  releaseNotes: string;
  releaseDate: Timestamp;
  installDate: Timestamp;
  extra?: JsonObject;
}
interface HandWrittenVersionUpdate {
  releaseSequence: number;
  version?: string;
  releaseNotes?: string;
  releaseDate?: Timestamp;
  installDate?: Timestamp;
  extra?: JsonObject;
}
interface HandWrittenLicenseField {
  field: string;
  title: string;
  type: string;
  value: string | number | boolean | null;
  hideFromCustomer: boolean;
  description?: string;
  signature?: { v1?: string; v2?: string };
}
interface HandWrittenLicense {
  licenseId: string;
  installationId: string;
  assignee?: string;
  releaseChannel?: string;
  fields: LicenseField[];
  expirationTime?: Timestamp;
  billingFrequency?: string;
  billingBegin?: Timestamp;
  billingEnd?: Timestamp;
  raw: JsonObject;
}
interface HandWrittenLicenseFieldValue {
  field: string;
  value: LicenseValue;
  raw: JsonObject;
}
interface HandWrittenIdentityGroup {
  dn: string;
  id: string;
  name: string;
  attributes: Record<string, string[]>;
}
interface HandWrittenIdentityUser {
  dn: string;
  username: string;
  attributes: Record<string, string[]>;
  groups: IdentityGroup[];
}
interface HandWrittenFakeCurrentVersion {
  version: string;
  releaseSequence: number;
  releaseNotes: string;
  releaseDate: string;
  installDate: string;
}
interface HandWrittenFakeLicense {
  licenseId: string;
  installationId: string;
  assignee?: string;
  releaseChannel?: string;
  fields: FakeLicenseField[];
  expirationTime?: string;
  billingFrequency?: string;
  billingBegin?: string;
  billingEnd?: string;
}

const same = {
  currentVersion: true satisfies Same<Flat<CurrentVersion>, Flat<HandWrittenCurrentVersion>>,
  versionUpdate: true satisfies Same<Flat<VersionUpdate>, Flat<HandWrittenVersionUpdate>>,
  licenseValue: true satisfies Same<LicenseValue, string | number | boolean | null>,
  licenseField: true satisfies Same<Flat<LicenseField>, Flat<HandWrittenLicenseField>>,
  license: true satisfies Same<Flat<License>, Flat<HandWrittenLicense>>,
  licenseFieldValue: true satisfies Same<
    Flat<LicenseFieldValue>,
    Flat<HandWrittenLicenseFieldValue>
  >,
  identitySource: true satisfies Same<Flat<IdentitySource>, { hostname: string; baseDn: string }>,
  identityGroup: true satisfies Same<Flat<IdentityGroup>, Flat<HandWrittenIdentityGroup>>,
  identityUser: true satisfies Same<Flat<IdentityUser>, Flat<HandWrittenIdentityUser>>,
  fakeCurrentVersion: true satisfies Same<
    Flat<FakeCurrentVersion>,
    Flat<HandWrittenFakeCurrentVersion>
  >,
  fakeLicense: true satisfies Same<Flat<FakeLicense>, Flat<HandWrittenFakeLicense>>,
  // The client's AuditEvent is written by hand (its action is generic): its fields are the schema's.
  auditEventFields: true satisfies Same<keyof AuditEvent, AuditEventField>,
  fakeAuditEvent: true satisfies Same<
    Flat<FakeAuditEvent>,
    {
      name?: string;
      title?: string;
      description?: string;
      ipAddress?: string;
      action?: string;
      extra?: Record<string, unknown>;
    }
  >,
  fakeStartupStatus: true satisfies Same<
    Flat<FakeStartupStatus>,
    { message: string; severity?: string }
  >,
};

it("keeps every record's public type as it was written by hand (checked by tsc)", () => {
  expect(Object.values(same).every(Boolean)).toBe(true);
});
