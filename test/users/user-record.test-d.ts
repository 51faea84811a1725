import type { JsonValue } from "type-fest";
import { describe, expectTypeOf, it } from "vitest";
import type * as z from "zod/mini";
import type { UserRecord, userRecordSchema } from "../../src/provisioning/index.ts";

describe("UserRecord", () => {
  it("is exactly what userRecordSchema parses", () => {
    expectTypeOf<z.output<typeof userRecordSchema>>().toEqualTypeOf<UserRecord>();
    expectTypeOf<UserRecord["extra"]>().toEqualTypeOf<Record<string, JsonValue> | undefined>();
  });
});
