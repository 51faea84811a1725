import * as z from "zod/mini";
import { ResponseShapeError } from "../integration-api/errors.ts";
import type { ApiResponse } from "../integration-api/http.ts";
import { readJsonObject } from "../integration-api/json-body.ts";
import type { FieldProblem } from "../integration-api/wire-record.ts";
import {
  type IdentityAttributes,
  identityExistsSchema,
  identityGroupRecord,
  type identityGroupShape,
  identitySourceRecord,
  type identitySourceShape,
  identitySourcesRecord,
  identityUserRecord,
  type identityUserShape,
} from "./identity-record.ts";

export type { IdentityAttributes };

/**
 * A directory the platform authenticates users against (an enabled LDAP source). Pass it as
 * `{ source }` when the platform has several.
 */
export interface IdentitySource extends z.output<z.ZodMiniObject<typeof identitySourceShape>> {}

/** A directory group the user belongs to. */
export interface IdentityGroup extends z.output<z.ZodMiniObject<typeof identityGroupShape>> {}

/** A directory user, as login and user() return it. */
export interface IdentityUser extends z.output<z.ZodMiniObject<typeof identityUserShape>> {
  groups: IdentityGroup[];
}

/** Reads GET /identity/v1/sources: `{"sources":[{"base_dn","hostname"}]}`. */
export function readSources(response: ApiResponse): IdentitySource[] {
  const { value, problems } = identitySourcesRecord.read(readJsonObject(response));
  const [problem] = problems;
  if (problem === undefined) return value.sources ?? [];
  const index = problem.issues[0]?.path[0];
  const { hostname, baseDn } = identitySourceRecord.wireNames;
  throw new ResponseShapeError(
    response,
    typeof index === "number"
      ? `source ${index} lacks a string ${hostname} or ${baseDn}`
      : `${problem.wireName} is not an array`,
  );
}

/**
 * Reads the login and user body, whose keys are PascalCase on the wire
 * (`{"DN","Username","Attributes","Groups":[{"DN","ID","Name","Attributes"}]}`). DN and Username
 * are required; absent Attributes and Groups (or Go's `null`) read as empty. The attributes
 * `userPassword` and `unicodePwd` are dropped should a directory ever send them.
 */
export function readUser(response: ApiResponse): IdentityUser {
  const { value, problems } = identityUserRecord.read(readJsonObject(response));
  if (problems.length === 0) return value as IdentityUser;
  throw new ResponseShapeError(response, userProblem(problems));
}

/** The message of the problem this reader has always reported first. */
function userProblem(problems: FieldProblem[]): string {
  const names = identityUserRecord.wireNames;
  const groups = problems.find(({ name }) => name === "groups");
  const attributes = problems.find(({ name }) => name === "attributes");
  if (problems.some(({ name }) => name === "dn" || name === "username")) {
    return `${names.dn} and ${names.username} must be strings`;
  }
  const [index, key, ...inside] = groups?.issues[0]?.path ?? [];
  if (groups !== undefined && index === undefined) return `${names.groups} is not an array`;
  if (attributes !== undefined) return attributesProblem(names.attributes, attributes);
  const group = `group ${String(index)}`;
  if (key === undefined) return `${group} is not an object`;
  // The first problem of the first group that has one: DN and Name first, then ID, then Attributes.
  const groupIssues = (groups?.issues ?? []).filter((issue) => issue.path[0] === index);
  const groupNames = identityGroupRecord.wireNames;
  const keys = new Set(groupIssues.map((issue) => issue.path[1]));
  if (keys.has(groupNames.dn) || keys.has(groupNames.name)) {
    return `${group} lacks a string ${groupNames.dn} or ${groupNames.name}`;
  }
  if (keys.has(groupNames.id)) return `${group} lacks an ${groupNames.id}`;
  const issue = groupIssues.find((candidate) => candidate.path[1] === groupNames.attributes);
  return attributesMessage(`${group} ${groupNames.attributes}`, issue?.path.slice(2) ?? inside);
}

function attributesProblem(where: string, problem: FieldProblem): string {
  return attributesMessage(where, problem.issues[0]?.path ?? []);
}

function attributesMessage(where: string, path: readonly PropertyKey[]): string {
  const [name] = path;
  return name === undefined
    ? `${where} is not an object`
    : `${where}.${String(name)} is not a list of strings`;
}

/** Reads GET /identity/v1/user/:username/exists: `true` or `false` as text/plain. */
export function readExists(response: ApiResponse): boolean {
  const text = response.body.trim() as z.input<typeof identityExistsSchema>;
  const exists = z.safeDecode(identityExistsSchema, text);
  if (exists.success) return exists.data;
  throw new ResponseShapeError(response, "expected true or false");
}
