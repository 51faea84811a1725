import { constants, generateKeyPairSync, sign } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  createLicenseClient,
  type LicenseFieldVerdict,
  type LicenseValue,
  verifyLicenseField,
} from "../../../src/clients/license/index.ts";
import { signedText } from "../../../src/clients/license/verify-license-field.ts";
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
function signAs(version: "v1" | "v2", text: string): string {
  return sign(version === "v1" ? "md5" : "sha256", Buffer.from(text), {
    key: own.privateKey,
    padding: constants.RSA_PKCS1_PSS_PADDING,
    saltLength: constants.RSA_PSS_SALTLEN_MAX_SIGN,
  }).toString("base64");
}

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

describe("verifyLicenseField", () => {
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
    "give the expected verdicts, v1 (MD5) and v2 (SHA-256)",
    async () => {
      const result = await runModule(
        `
      const { verifyLicenseField } = await import(src + "clients/license/verify-license-field.ts");
      const vectors = ${JSON.stringify(vectors)};
      const verdicts = [];
      for (const set of vectors.sets) {
        for (const field of set.fields) {
          verdicts.push(await verifyLicenseField(field, set.publicKeyPem));
        }
      }
      console.log(JSON.stringify(verdicts));
      `,
        runtime,
      );
      expect(result.stderr).toBe("");
      const expected = vectors.sets.flatMap((set) => set.fields.map((field) => field.expect));
      expect(JSON.parse(result.stdout)).toEqual(expected);
      expect(expected).toContain("invalid");
    },
  );
});
