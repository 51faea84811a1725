// The discovery documents (RFC 7644 §4, RFC 7643 §5-7): what the server supports, said truthfully
// from the same table the engines read. Built once per handler.
import type { JsonObject } from "./evaluate.ts";
import {
  type AttributeDefinition,
  enterpriseAttributes,
  enterpriseSchema,
  userAttributes,
  userSchema,
} from "./schemas.ts";

const spcSchema = "urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig";
const resourceTypeSchema = "urn:ietf:params:scim:schemas:core:2.0:ResourceType";
const schemaSchema = "urn:ietf:params:scim:schemas:core:2.0:Schema";

/** The discovery documents of one handler. */
export interface Discovery {
  serviceProviderConfig: JsonObject;
  resourceTypes: JsonObject[];
  schemas: JsonObject[];
}

/** Builds the documents for a server at `location` (the base path or base URL). */
export function discoveryDocuments(location: string, maxResults: number): Discovery {
  const meta = (resourceType: string, path: string) => ({
    resourceType,
    location: `${location}${path}`,
  });
  const serviceProviderConfig = {
    schemas: [spcSchema],
    documentationUri:
      "https://github.com/platform-integration/platform-integration/blob/main/docs/scim.md",
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: true },
    authenticationSchemes: [
      {
        type: "oauthbearertoken",
        name: "Bearer token",
        description: "A bearer token in the Authorization header",
        primary: true,
      },
    ],
    meta: meta("ServiceProviderConfig", "/ServiceProviderConfig"),
  };
  // Groups are not served: the user store has none. Only the User resource type is listed.
  const resourceTypes = [
    {
      schemas: [resourceTypeSchema],
      id: "User",
      name: "User",
      endpoint: "/Users",
      description: "User Account",
      schema: userSchema,
      schemaExtensions: [{ schema: enterpriseSchema, required: false }],
      meta: meta("ResourceType", "/ResourceTypes/User"),
    },
  ];
  const schemas = [
    {
      schemas: [schemaSchema],
      id: userSchema,
      name: "User",
      description: "User Account",
      attributes: userAttributes
        .filter((attribute) => !["id", "externalId", "meta"].includes(attribute.name))
        .map(described),
      meta: meta("Schema", `/Schemas/${userSchema}`),
    },
    {
      schemas: [schemaSchema],
      id: enterpriseSchema,
      name: "EnterpriseUser",
      description: "Enterprise User",
      attributes: enterpriseAttributes.map(described),
      meta: meta("Schema", `/Schemas/${enterpriseSchema}`),
    },
  ];
  return { serviceProviderConfig, resourceTypes, schemas };
}

/** An attribute definition with RFC 7643 §7's defaults written out. */
function described(attribute: AttributeDefinition): JsonObject {
  const result: JsonObject = {
    name: attribute.name,
    type: attribute.type,
    multiValued: attribute.multiValued ?? false,
    description: attribute.name,
    required: attribute.required ?? false,
    caseExact: attribute.caseExact ?? false,
    mutability: attribute.mutability ?? "readWrite",
    returned: attribute.returned ?? "default",
    uniqueness: attribute.uniqueness ?? "none",
  };
  if (attribute.referenceTypes !== undefined) result.referenceTypes = attribute.referenceTypes;
  if (attribute.subAttributes !== undefined) {
    result.subAttributes = attribute.subAttributes.map(described);
  }
  return result;
}
