import { constants, generateKeyPairSync, sign } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  createLicenseClient,
  type LicenseFieldVerdict,
  type LicenseValue,
  verifyLicenseField,
} from "../../../src/clients/license/index.ts";
import {
  signedText,
  webCryptoVerifier,
} from "../../../src/clients/license/verify-license-field.ts";

function spkiBytes(pem: string): Uint8Array<ArrayBuffer> {
  const body = pem.replace(/-----[A-Z ]+-----/g, "").replace(/\s+/g, "");
  return new Uint8Array(Buffer.from(body, "base64"));
}

import { createFakeSdkApi } from "../../../src/testing/fake-sdk-api.ts";
import { hasRuntime, runModule } from "../integration-api/child-process.ts";

interface VectorField {
  name: string;
  value?: LicenseValue;
  signature: { v1?: string; v2?: string };
  expect: LicenseFieldVerdict;
}
const vectors = JSON.parse(
  readFileSync(new URL("../../fixtures/newer-api-signature-vectors.json", import.meta.url), "utf8"),
) as { sets: { signatureVersion: string; publicKeyPem: string; fields: VectorField[] }[] };

// A key of our own, to sign what the vendor's vectors lack: both versions on one field, <nil>.
const own = generateKeyPairSync("rsa", { modulusLength: 2048 });
const ownPem = own.publicKey.export({ type: "spki", format: "pem" }).toString();
function signAs(
  version: "v1" | "v2",
  text: string,
  saltLength: number = constants.RSA_PSS_SALTLEN_MAX_SIGN,
): string {
  return sign(version === "v1" ? "md5" : "sha256", Buffer.from(text), {
    key: own.privateKey,
    padding: constants.RSA_PKCS1_PSS_PADDING,
    saltLength,
  }).toString("base64");
}

// Cases the vendor's vectors lack, for every runtime: signatures with a salt shorter than the
// maximum (the vendor verifies with any salt), and values whose JSON type is not their
// valueType, though their text is what was signed (a Boolean false served as "false").
const extraCases: { field: Record<string, unknown>; expect: LicenseFieldVerdict; about: string }[] =
  [
    ...(
      [
        ["v2", 32],
        ["v2", 0],
        ["v2", 100],
        ["v1", 16],
      ] as const
    ).map(([version, salt]) => ({
      about: `${version}, salt ${salt}`,
      field: { value: 10, signature: { [version]: signAs(version, "10", salt) } },
      expect: "valid" as const,
    })),
    {
      about: "v2, salt 32, value changed",
      field: { value: 11, signature: { v2: signAs("v2", "10", 32) } },
      expect: "invalid",
    },
    {
      about: "Boolean false as a boolean",
      field: { value: false, valueType: "Boolean", signature: { v2: signAs("v2", "false") } },
      expect: "valid",
    },
    {
      about: 'Boolean false served as the string "false"',
      field: { value: "false", valueType: "Boolean", signature: { v2: signAs("v2", "false") } },
      expect: "invalid",
    },
    {
      about: 'Integer 0 served as the string "0"',
      field: { value: "0", valueType: "Integer", signature: { v2: signAs("v2", "0") } },
      expect: "invalid",
    },
    {
      about: 'Integer 0 served as "0", the type named as the clients name it',
      field: { value: "0", type: "Integer", signature: { v2: signAs("v2", "0") } },
      expect: "invalid",
    },
    {
      about: "String 10 served as the number 10",
      field: { value: 10, valueType: "String", signature: { v2: signAs("v2", "10") } },
      expect: "invalid",
    },
    {
      about: 'an empty Integer ("")',
      field: { value: "", valueType: "Integer", signature: { v2: signAs("v2", "") } },
      expect: "valid",
    },
    // Issue 39's fixes, m2: what the attacker's forgeries found.
    {
      about: "a lone surrogate with the signature of U+FFFD",
      field: { value: "\uD800", valueType: "String", signature: { v2: signAs("v2", "\uFFFD") } },
      expect: "invalid",
    },
    {
      about: "a lone low surrogate inside text, with the signature of U+FFFD there",
      field: { value: "a\uDC00b", signature: { v2: signAs("v2", "a\uFFFDb") } },
      expect: "invalid",
    },
    {
      about: "a surrogate pair (an emoji)",
      field: {
        value: "a\u{1F600}",
        valueType: "String",
        signature: { v2: signAs("v2", "a\u{1F600}") },
      },
      expect: "valid",
    },
    {
      about: 'a miscased valueType "boolean" with the string "false"',
      field: { value: "false", valueType: "boolean", signature: { v2: signAs("v2", "false") } },
      expect: "invalid",
    },
    ...["__proto__", "toString", "constructor", "Float"].map((valueType) => ({
      about: `a valueType the SDK does not know (${valueType}): passed through unchecked`,
      field: { value: "x", valueType, signature: { v2: signAs("v2", "x") } },
      expect: "valid" as const,
    })),
  ];

describe("verifyLicenseField: the vendor's known-answer vectors", () => {
  for (const set of vectors.sets) {
    for (const field of set.fields) {
      it(`${set.signatureVersion} ${field.name}: ${field.expect}`, async () => {
        expect(await verifyLicenseField(field, set.publicKeyPem)).toBe(field.expect);
      });
    }
    it(`${set.signatureVersion}: every valid field fails once its value changes`, async () => {
      for (const field of set.fields.filter((candidate) => candidate.expect === "valid")) {
        const changed = typeof field.value === "number" ? field.value + 1 : `${field.value}x`;
        expect(await verifyLicenseField({ ...field, value: changed }, set.publicKeyPem)).toBe(
          "invalid",
        );
      }
    });
  }
});

describe("verifyLicenseField: salt lengths and value types", () => {
  for (const { about, field, expect: verdict } of extraCases) {
    it(`${about}: ${verdict}`, async () => {
      expect(await verifyLicenseField(field, ownPem)).toBe(verdict);
    });
  }

  it("without node:crypto, tries the salt lengths the vendor's tooling produces (maximum, digest)", async () => {
    const verify = await webCryptoVerifier(spkiBytes(ownPem));
    const message = new TextEncoder().encode("10");
    const check = (salt: number) =>
      verify("sha256", message, new Uint8Array(Buffer.from(signAs("v2", "10", salt), "base64")));
    expect(await check(constants.RSA_PSS_SALTLEN_MAX_SIGN)).toBe(true);
    expect(await check(32)).toBe(true);
    // WebCrypto needs the salt length: one it does not try reads invalid, as the docs say.
    expect(await check(100)).toBe(false);
    await expect(
      verify("md5", message, new Uint8Array(Buffer.from(signAs("v1", "10"), "base64"))),
    ).rejects.toThrow(/needs node:crypto/);
  });

  it("license.field() and license.license() refuse a value whose JSON type is not its valueType", async () => {
    const bodies: Record<string, unknown> = {
      "/api/v1/license/fields/flag": {
        name: "flag",
        value: "false",
        valueType: "Boolean",
        signature: { v2: signAs("v2", "false") },
      },
      "/api/v1/license/fields/seats": {
        name: "seats",
        value: 0,
        valueType: "Integer",
        signature: {},
      },
      "/api/v1/license/info": {
        licenseID: "L",
        entitlements: { seats: { value: "0", valueType: "Integer", signature: {} } },
      },
    };
    const license = createLicenseClient({
      api: "sdk",
      baseUrl: "http://sdk.test",
      fetch: async (request) =>
        Response.json(bodies[new URL(request.url).pathname] ?? {}, { status: 200 }),
    });
    await expect(license.field("flag")).rejects.toMatchObject({
      name: "ResponseShapeError",
      message: expect.stringContaining(
        '"flag": its value "false" is a string, but its valueType Boolean needs a boolean',
      ),
    });
    expect((await license.field("seats"))?.value).toBe(0);
    await expect(license.license()).rejects.toMatchObject({
      name: "ResponseShapeError",
      message: expect.stringContaining("valueType Integer needs an integer"),
    });
  });
});

describe("verifyLicenseField", () => {
  it("proves the text only, as the docs say: another field's signature of the same text verifies", async () => {
    const seats = { value: 1000, type: "Integer", signature: { v2: signAs("v2", "1000") } };
    // The same signature on another field with the same text: nothing binds it to its field.
    expect(await verifyLicenseField({ ...seats, type: "Integer" }, ownPem)).toBe("valid");
    const nilOfAnyField = { v2: signAs("v2", "<nil>") };
    expect(await verifyLicenseField({ signature: nilOfAnyField, type: "String" }, ownPem)).toBe(
      "valid",
    );
  });

  it("prefers v2 where a field has both signatures", async () => {
    const v1 = signAs("v1", "10");
    const v2 = signAs("v2", "10");
    const broken = signAs("v2", "11");
    expect(await verifyLicenseField({ value: 10, signature: { v1, v2 } }, ownPem)).toBe("valid");
    expect(await verifyLicenseField({ value: 10, signature: { v1, v2: broken } }, ownPem)).toBe(
      "invalid",
    );
    expect(await verifyLicenseField({ value: 10, signature: { v1 } }, ownPem)).toBe("valid");
  });

  it("signs a field without a value as <nil>, and text, integers and booleans as Go prints them", async () => {
    expect(signedText(undefined)).toBe("<nil>");
    expect(signedText(null)).toBe("<nil>");
    expect([signedText(587), signedText(true), signedText("a\nb"), signedText("")]).toEqual([
      "587",
      "true",
      "a\nb",
      "",
    ]);
    for (const version of ["v1", "v2"] as const) {
      const signature = { [version]: signAs(version, "<nil>") };
      expect(await verifyLicenseField({ signature }, ownPem)).toBe("valid");
      expect(await verifyLicenseField({ value: "", signature }, ownPem)).toBe("invalid");
    }
  });

  it("is unsigned without a signature, invalid with a malformed one or another key", async () => {
    const [set] = vectors.sets;
    expect(await verifyLicenseField({ value: 1 }, ownPem)).toBe("unsigned");
    expect(await verifyLicenseField({ value: 1, signature: {} }, ownPem)).toBe("unsigned");
    expect(await verifyLicenseField({ value: 1, signature: { v2: "not base64!" } }, ownPem)).toBe(
      "invalid",
    );
    expect(await verifyLicenseField({ value: 1, signature: { v2: "AAAA" } }, ownPem)).toBe(
      "invalid",
    );
    const field = set?.fields.find((candidate) => candidate.expect === "valid");
    expect(field).toBeDefined();
    if (field) expect(await verifyLicenseField(field, ownPem)).toBe("invalid");
  });

  it("refuses a key that is not an RSA public key in PEM", async () => {
    await expect(verifyLicenseField({ value: 1 }, "not a key")).rejects.toThrow(TypeError);
    await expect(
      verifyLicenseField(
        { value: 1 },
        "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----",
      ),
    ).rejects.toThrow(/not an RSA public key/);
  });

  it("verifies what license.field() and license.license() return from the newer API", async () => {
    const set = vectors.sets.find((candidate) => candidate.signatureVersion === "v2");
    const vector = set?.fields.find((field) => field.name === "member_count_max");
    if (set === undefined || vector === undefined) throw new Error("vector missing");
    const fake = createFakeSdkApi({
      license: {
        licenseId: "L",
        customerName: "C",
        fields: [
          {
            name: vector.name,
            value: vector.value as number,
            valueType: "Integer",
            signature: vector.signature,
          },
        ],
      },
    });
    const license = createLicenseClient({
      api: "sdk",
      baseUrl: "http://sdk.test",
      fetch: fake.fetch,
    });
    const field = await license.field(vector.name);
    if (field === undefined) throw new Error("field missing");
    expect(await verifyLicenseField(field, set.publicKeyPem)).toBe("valid");
    const [listed] = (await license.license()).fields;
    if (listed === undefined) throw new Error("field missing");
    expect(await verifyLicenseField(listed, set.publicKeyPem)).toBe("valid");
    // The Integration API's fields carry no signature.
    expect(await verifyLicenseField({ value: vector.value }, set.publicKeyPem)).toBe("unsigned");
  });
});

// Bun and Deno are installed by the CI step .ci/steps/hono-bun-deno.sh, which requires them.
const required = process.env.PLATFORM_INTEGRATION_REQUIRE_RUNTIMES === "1";

describe.each(["node", "bun", "deno"] as const)("the vectors on %s", (runtime) => {
  if (required) {
    it("is installed", () => expect(hasRuntime(runtime), `${runtime} is required`).toBe(true));
  }
  it.skipIf(!hasRuntime(runtime))(
    "give the expected verdicts, v1 (MD5) and v2 (SHA-256), any salt length, value types checked",
    async () => {
      const result = await runModule(
        `
      const { verifyLicenseField } = await import(src + "clients/license/verify-license-field.ts");
      const vectors = ${JSON.stringify(vectors)};
      const extra = ${JSON.stringify(extraCases)};
      const verdicts = [];
      for (const set of vectors.sets) {
        for (const field of set.fields) {
          verdicts.push(await verifyLicenseField(field, set.publicKeyPem));
        }
      }
      for (const { field } of extra) verdicts.push(await verifyLicenseField(field, ${JSON.stringify(ownPem)}));
      console.log(JSON.stringify(verdicts));
      `,
        runtime,
      );
      expect(result.stderr).toBe("");
      const expected = [
        ...vectors.sets.flatMap((set) => set.fields.map((field) => field.expect)),
        ...extraCases.map((item) => item.expect),
      ];
      expect(JSON.parse(result.stdout)).toEqual(expected);
      expect(expected).toContain("invalid");
    },
  );
});
