// The messages of the ResponseShapeError each reader throws, pinned as the hand-written field
// tables worded them before the records moved to zod schemas (generated from those readers): an
// application that logs or matches them sees no change.
import { describe, expect, it } from "vitest";
import { readExists, readSources, readUser } from "../../../src/clients/identity/read-identity.ts";
import { ResponseShapeError } from "../../../src/clients/integration-api/errors.ts";
import type { ApiResponse } from "../../../src/clients/integration-api/http.ts";
import { readFieldValue, readLicense } from "../../../src/clients/license/read-license.ts";
import { readCurrentVersion, readUpdates } from "../../../src/clients/version/read-version.ts";

const response = (body: string): ApiResponse => ({
  method: "GET",
  url: "http://platform.test/",
  status: 200,
  headers: new Headers(),
  body,
});

const cases: [string, (response: ApiResponse) => unknown, string, string][] = [
  ["readCurrentVersion", readCurrentVersion, "[]", "expected a JSON object"],
  [
    "readCurrentVersion",
    readCurrentVersion,
    '{"version":"1"}',
    "missing release_sequence, release_notes, release_date, install_date",
  ],
  [
    "readCurrentVersion",
    readCurrentVersion,
    '{"version":"1","release_sequence":1.5,"release_notes":"","release_date":"2020-01-01T00:00:00Z"}',
    "missing install_date; malformed release_sequence",
  ],
  [
    "readCurrentVersion",
    readCurrentVersion,
    '{"version":null,"release_sequence":1,"release_notes":"","release_date":"2020-02-30T00:00:00Z","install_date":"2020-01-01T00:00:00Z"}',
    "malformed version, release_date",
  ],
  ["readUpdates", readUpdates, '"nope"', "expected a list of updates, or an object holding one"],
  [
    "readUpdates",
    readUpdates,
    '{"a":[],"b":[]}',
    "expected a list of updates, or an object holding one",
  ],
  [
    "readLicense",
    readLicense,
    '{"license_id":1,"installation_id":"I","fields":[]}',
    "license_id and installation_id must be strings",
  ],
  [
    "readLicense",
    readLicense,
    '{"installation_id":"I","fields":[]}',
    "license_id and installation_id must be strings",
  ],
  [
    "readLicense",
    readLicense,
    '{"license_id":"L","installation_id":"I","fields":null}',
    "fields is not an array",
  ],
  [
    "readLicense",
    readLicense,
    '{"license_id":"L","installation_id":"I","fields":[{"field":"max","value":1},3]}',
    "fields[1] is not an object",
  ],
  [
    "readLicense",
    readLicense,
    '{"license_id":"L","installation_id":"I","fields":[{"value":1}]}',
    "fields[0].field must be a string",
  ],
  [
    "readLicense",
    readLicense,
    '{"license_id":"L","installation_id":"I","fields":[{"field":"max"}]}',
    "fields[0] (max) has a malformed value or hide_from_customer",
  ],
  [
    "readLicense",
    readLicense,
    '{"license_id":"L","installation_id":"I","fields":[{"field":"max","value":1,"hide_from_customer":"yes"}]}',
    "fields[0] (max) has a malformed value or hide_from_customer",
  ],
  [
    "readLicense",
    readLicense,
    '{"license_id":"L","installation_id":"I","fields":[],"assignee":3,"expiration_time":"soon"}',
    "assignee must be a string",
  ],
  [
    "readLicense",
    readLicense,
    '{"license_id":"L","installation_id":"I","fields":[],"billing_frequency":false}',
    "billing_frequency must be a string",
  ],
  [
    "readLicense",
    readLicense,
    '{"license_id":"L","installation_id":"I","fields":[],"billing_end":"2020-13-01T00:00:00Z"}',
    "billing_end must be an RFC 3339 date-time",
  ],
  [
    "readLicense",
    readLicense,
    '{"license_id":"L","installation_id":"I","fields":[],"expiration_time":5}',
    "expiration_time must be an RFC 3339 date-time",
  ],
  ["readFieldValue", readFieldValue, '{"field":"max"}', "expected { field, value }"],
  ["readFieldValue", readFieldValue, '{"field":1,"value":"x"}', "expected { field, value }"],
  ["readSources", readSources, '{"sources":{}}', "sources is not an array"],
  [
    "readSources",
    readSources,
    '{"sources":[{"hostname":"h","base_dn":"b"},{"hostname":"h"}]}',
    "source 1 lacks a string hostname or base_dn",
  ],
  ["readUser", readUser, '{"DN":"d"}', "DN and Username must be strings"],
  [
    "readUser",
    readUser,
    '{"DN":"d","Username":"u","Groups":{},"Attributes":1}',
    "Groups is not an array",
  ],
  ["readUser", readUser, '{"DN":"d","Username":"u","Attributes":1}', "Attributes is not an object"],
  [
    "readUser",
    readUser,
    '{"DN":"d","Username":"u","Attributes":{"cn":[1]}}',
    "Attributes.cn is not a list of strings",
  ],
  ["readUser", readUser, '{"DN":"d","Username":"u","Groups":[null]}', "group 0 is not an object"],
  [
    "readUser",
    readUser,
    '{"DN":"d","Username":"u","Groups":[{"DN":"g","ID":null,"Name":1}]}',
    "group 0 lacks a string DN or Name",
  ],
  [
    "readUser",
    readUser,
    '{"DN":"d","Username":"u","Groups":[{"DN":"g","Name":"n","ID":1.5}]}',
    "group 0 lacks an ID",
  ],
  [
    "readUser",
    readUser,
    '{"DN":"d","Username":"u","Groups":[{"DN":"g","Name":"n","ID":1,"Attributes":{"cn":"x","mail":{}}}]}',
    "group 0 Attributes.mail is not a list of strings",
  ],
  [
    "readUser",
    readUser,
    '{"DN":"d","Username":"u","Groups":[{"DN":"g","Name":"n","ID":1,"Attributes":[]}]}',
    "group 0 Attributes is not an object",
  ],
  ["readExists", readExists, "True", "expected true or false"],
];

describe("the readers' ResponseShapeError messages", () => {
  const table = cases.map(([name, read, body, problem]) => ({ name, read, body, problem }));
  it.each(table)("$name of $body: $problem", ({ read, body, problem }) => {
    const thrown = (() => {
      try {
        read(response(body));
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(thrown).toBeInstanceOf(ResponseShapeError);
    expect((thrown as Error).message).toBe(new ResponseShapeError(response(body), problem).message);
  });
});
