// The schemas the SCIM server speaks (RFC 7643 §4.1 core User, §4.3 enterprise extension): one
// table read by the name normalizer, the filter and PATCH engines (case-exactness, types,
// multi-valued attributes, mutability) and served as is by `/Schemas`.

/** The core User schema's URN. */
export const userSchema = "urn:ietf:params:scim:schemas:core:2.0:User";
/** The enterprise User extension's URN. */
export const enterpriseSchema = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
/** The ListResponse message schema. */
export const listResponseSchema = "urn:ietf:params:scim:api:messages:2.0:ListResponse";
/** The PatchOp message schema. */
export const patchOpSchema = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

/** One attribute definition, as RFC 7643 §7 describes it (defaults left out). */
export interface AttributeDefinition {
  readonly name: string;
  readonly type:
    | "string"
    | "boolean"
    | "decimal"
    | "integer"
    | "dateTime"
    | "binary"
    | "reference"
    | "complex";
  readonly multiValued?: boolean;
  readonly required?: boolean;
  readonly caseExact?: boolean;
  readonly mutability?: "readOnly" | "readWrite" | "immutable" | "writeOnly";
  readonly returned?: "always" | "never" | "default" | "request";
  readonly uniqueness?: "none" | "server" | "global";
  readonly subAttributes?: readonly AttributeDefinition[];
  readonly referenceTypes?: readonly string[];
  readonly canonicalValues?: readonly string[];
}

const text = (name: string, more: Partial<AttributeDefinition> = {}): AttributeDefinition => ({
  name,
  type: "string",
  ...more,
});

/** The sub-attributes RFC 7643 §2.4 gives every multi-valued attribute. */
const multiValue = (valueType: AttributeDefinition["type"] = "string") => [
  { name: "value", type: valueType } as AttributeDefinition,
  text("display"),
  text("type"),
  { name: "primary", type: "boolean" } as AttributeDefinition,
];

const multi = (name: string, more: Partial<AttributeDefinition> = {}): AttributeDefinition => ({
  name,
  type: "complex",
  multiValued: true,
  subAttributes: multiValue(),
  ...more,
});

/** The core User schema's attributes (RFC 7643 §4.1), `id`, `externalId` and `meta` included. */
export const userAttributes: readonly AttributeDefinition[] = [
  text("id", { caseExact: true, mutability: "readOnly", returned: "always", uniqueness: "server" }),
  text("externalId", { caseExact: true }),
  text("userName", { required: true, uniqueness: "server" }),
  {
    name: "name",
    type: "complex",
    subAttributes: [
      text("formatted"),
      text("familyName"),
      text("givenName"),
      text("middleName"),
      text("honorificPrefix"),
      text("honorificSuffix"),
    ],
  },
  text("displayName"),
  text("nickName"),
  { name: "profileUrl", type: "reference", referenceTypes: ["external"] },
  text("title"),
  text("userType"),
  text("preferredLanguage"),
  text("locale"),
  text("timezone"),
  { name: "active", type: "boolean" },
  text("password", { mutability: "writeOnly", returned: "never" }),
  multi("emails"),
  multi("phoneNumbers"),
  multi("ims"),
  multi("photos", { subAttributes: multiValue("reference") }),
  multi("addresses", {
    subAttributes: [
      text("formatted"),
      text("streetAddress"),
      text("locality"),
      text("region"),
      text("postalCode"),
      text("country"),
      text("type"),
      { name: "primary", type: "boolean" },
    ],
  }),
  multi("groups", { mutability: "readOnly" }),
  multi("entitlements"),
  multi("roles"),
  multi("x509Certificates", { subAttributes: multiValue("binary") }),
  {
    name: "meta",
    type: "complex",
    mutability: "readOnly",
    subAttributes: [
      text("resourceType", { mutability: "readOnly" }),
      { name: "created", type: "dateTime", mutability: "readOnly" },
      { name: "lastModified", type: "dateTime", mutability: "readOnly" },
      { name: "location", type: "reference", mutability: "readOnly" },
      text("version", { mutability: "readOnly" }),
    ],
  },
];

/** The enterprise extension's attributes (RFC 7643 §4.3). */
export const enterpriseAttributes: readonly AttributeDefinition[] = [
  text("employeeNumber"),
  text("costCenter"),
  text("organization"),
  text("division"),
  text("department"),
  {
    name: "manager",
    type: "complex",
    subAttributes: [
      text("value"),
      { name: "$ref", type: "reference", referenceTypes: ["User"] },
      text("displayName", { mutability: "readOnly" }),
    ],
  },
];

/** The attribute definition named `name` (any case) among `attributes`. */
export function attributeOf(
  attributes: readonly AttributeDefinition[] | undefined,
  name: string,
): AttributeDefinition | undefined {
  const lower = name.toLowerCase();
  return attributes?.find((attribute) => attribute.name.toLowerCase() === lower);
}

/**
 * The attributes of the schema a path names in its canonical form: the core User's when it names
 * none, the enterprise extension's, or undefined for any other schema (not the User's).
 */
export function attributesOfSchema(
  schema: string | undefined,
): readonly AttributeDefinition[] | undefined {
  if (schema === undefined || schema === userSchema) return userAttributes;
  return schema === enterpriseSchema ? enterpriseAttributes : undefined;
}

/** Whether a schema URN is one of the User resource's (any case, RFC 7643 §2.1). */
export function schemaOf(urn: string): typeof userSchema | typeof enterpriseSchema | undefined {
  const lower = urn.toLowerCase();
  if (lower === userSchema.toLowerCase()) return userSchema;
  if (lower === enterpriseSchema.toLowerCase()) return enterpriseSchema;
  return undefined;
}
