// A type test (vitest's typecheck): each record's type now comes from its zod schema, and these
// assertions pin it to the shape it had when it was written by hand, so that a schema change that
// would change a public type fails the suite (and says so in CHANGELOG).
import type { JsonObject } from "type-fest";
import { expectTypeOf, it } from "vitest";
import type * as z from "zod/mini";
import type { AuditEventField } from "../../../src/clients/audit/audit-event-schema.ts";
import type { FakeAuditEvent } from "../../../src/clients/audit/fake.ts";
import type { AuditEvent } from "../../../src/clients/audit/index.ts";
import type { startupStatusRecord } from "../../../src/clients/console/console-record.ts";
import type { FakeStartupStatus } from "../../../src/clients/console/fake.ts";
import type {
  IdentityGroup,
  IdentitySource,
  IdentityUser,
} from "../../../src/clients/identity/read-identity.ts";
import type { Timestamp } from "../../../src/clients/integration-api/timestamp.ts";
import type { RecordOf, WireValuesOf } from "../../../src/clients/integration-api/wire-record.ts";
import type { FakeLicense, FakeLicenseField } from "../../../src/clients/license/fake.ts";
import type { licenseValueSchema } from "../../../src/clients/license/license-record.ts";
import type {
  License,
  LicenseField,
  LicenseFieldValue,
  LicenseValue,
} from "../../../src/clients/license/read-license.ts";
import type { FakeCurrentVersion } from "../../../src/clients/version/fake.ts";
import type { CurrentVersion, VersionUpdate } from "../../../src/clients/version/read-version.ts";
import type { currentVersionRecord } from "../../../src/clients/version/version-record.ts";

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

it("keeps every record's public type as it was written by hand", () => {
  expectTypeOf<Flat<CurrentVersion>>().toEqualTypeOf<Flat<HandWrittenCurrentVersion>>();
  expectTypeOf<Flat<VersionUpdate>>().toEqualTypeOf<Flat<HandWrittenVersionUpdate>>();
  expectTypeOf<LicenseValue>().toEqualTypeOf<string | number | boolean | null>();
  expectTypeOf<Flat<LicenseField>>().toEqualTypeOf<Flat<HandWrittenLicenseField>>();
  expectTypeOf<Flat<License>>().toEqualTypeOf<Flat<HandWrittenLicense>>();
  expectTypeOf<Flat<LicenseFieldValue>>().toEqualTypeOf<Flat<HandWrittenLicenseFieldValue>>();
  expectTypeOf<Flat<IdentitySource>>().toEqualTypeOf<{ hostname: string; baseDn: string }>();
  expectTypeOf<Flat<IdentityGroup>>().toEqualTypeOf<Flat<HandWrittenIdentityGroup>>();
  expectTypeOf<Flat<IdentityUser>>().toEqualTypeOf<Flat<HandWrittenIdentityUser>>();
  expectTypeOf<Flat<FakeCurrentVersion>>().toEqualTypeOf<Flat<HandWrittenFakeCurrentVersion>>();
  expectTypeOf<Flat<FakeLicense>>().toEqualTypeOf<Flat<HandWrittenFakeLicense>>();
  expectTypeOf<keyof AuditEvent>().toEqualTypeOf<AuditEventField>();
  expectTypeOf<Flat<FakeAuditEvent>>().toEqualTypeOf<{
    name?: string;
    title?: string;
    description?: string;
    ipAddress?: string;
    action?: string;
    extra?: Record<string, unknown>;
  }>();
  expectTypeOf<Flat<FakeStartupStatus>>().toEqualTypeOf<{ message: string; severity?: string }>();
});

// The public types spelled out for their readers (TypeDoc shows them, not the schema's internal
// helpers) stay the schema's: a field changed in the schema fails here.
it("spells out the same types as the schemas derive", () => {
  // One schema for the value on every API; null is the Integration API's "no value".
  expectTypeOf<LicenseValue>().toEqualTypeOf<z.output<typeof licenseValueSchema> | null>();
  expectTypeOf<Flat<FakeCurrentVersion>>().toEqualTypeOf<
    Flat<WireValuesOf<typeof currentVersionRecord.shape>>
  >();
  expectTypeOf<Flat<FakeStartupStatus>>().toEqualTypeOf<
    Flat<RecordOf<typeof startupStatusRecord.shape>>
  >();
});
