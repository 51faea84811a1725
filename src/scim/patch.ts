// PATCH (RFC 7644 §3.5.2): add, replace and remove, with and without `path`, value filters in
// paths, several operations in order. Applied to a copy: one failing operation throws and the
// stored resource stays as it was (atomic per user). Entra's quirks are read here: capitalised
// operation names, string booleans, a replace without path whose value keys are paths
// (`"name.givenName"`, `"urn:…:enterprise:2.0:User:employeeNumber"`), `Add` of a work email
// through a value path that matches nothing yet.
import { badPath, badSyntax, badValue, mutability, noTarget, ScimError } from "./errors.ts";
import { type JsonObject, matches, ownKey, ownValue } from "./evaluate.ts";
import { type AttributePath, type Filter, type PatchPath, parsePatchPath } from "./filter.ts";
import {
  keyOf,
  mergedComplex,
  type PatchWork,
  patchWork,
  primaryAfter,
  spend,
  termsOf,
  withoutValues,
} from "./patch-values.ts";
import {
  checkResourceBounds,
  copyResource,
  isPrototypeKey,
  normalizeValue,
  onePrimary,
  plainObject,
  refuseBlankUserName,
  setOwn,
  skippedOnWrite,
} from "./resource.ts";
import {
  type AttributeDefinition,
  attributeOf,
  enterpriseAttributes,
  enterpriseSchema,
  patchOpSchema,
  userAttributes,
  userSchema,
} from "./schemas.ts";

/** The most operations one PATCH request may carry. */
export const maxPatchOperations = 1000;

/** One PATCH operation, its name in lower case. */
export interface PatchOperation {
  readonly op: "add" | "replace" | "remove";
  readonly path: string | undefined;
  readonly value: unknown;
}

/**
 * The operations of a PatchOp body, checked: the schema listed, `Operations` a non-empty list of
 * at most {@link maxPatchOperations}, each `op` add, replace or remove in any case.
 *
 * @throws ScimError 400 `invalidSyntax` saying what is wrong.
 */
export function readPatchBody(body: unknown): PatchOperation[] {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw badSyntax("The body must be a PatchOp object");
  }
  const schemas = ownValue(body, "schemas");
  if (
    !Array.isArray(schemas) ||
    !schemas.some(
      (schema) =>
        typeof schema === "string" && schema.toLowerCase() === patchOpSchema.toLowerCase(),
    )
  ) {
    throw badSyntax(`The body's schemas must list ${patchOpSchema}`);
  }
  const operations = ownValue(body, "Operations");
  if (!Array.isArray(operations) || operations.length === 0) {
    throw badSyntax("Operations must be a non-empty list");
  }
  if (operations.length > maxPatchOperations) {
    throw badSyntax(`A PATCH takes at most ${maxPatchOperations} operations`);
  }
  return operations.map((operation, index) => {
    const op = ownValue(operation, "op");
    const name = typeof op === "string" ? op.toLowerCase() : undefined;
    if (name !== "add" && name !== "replace" && name !== "remove") {
      throw badSyntax(`Operation ${index + 1}: op must be add, replace or remove`);
    }
    const path = ownValue(operation, "path");
    if (path !== undefined && path !== null && typeof path !== "string") {
      throw badPath(`Operation ${index + 1}: path must be a string`);
    }
    return {
      op: name,
      path: typeof path === "string" && path.trim() !== "" ? path : undefined,
      value: ownValue(operation, "value"),
    };
  });
}

/**
 * Applies `operations` in order to a copy of `resource` and returns it; throws on the first
 * failure, and before any work beyond `maxPatchWork` (see patch-values.ts).
 */
export function applyPatch(
  resource: JsonObject,
  operations: readonly PatchOperation[],
): JsonObject {
  const target = copyResource(resource);
  const work = patchWork();
  for (const operation of operations) applyOne(target, operation, work);
  checkResourceBounds(target);
  refuseBlankUserName(target);
  return target;
}

function applyOne(resource: JsonObject, operation: PatchOperation, work: PatchWork): void {
  // RFC 7644 §3.5.2.1, .3: add and replace MUST carry a value; read as null, it would unassign.
  if (operation.op !== "remove" && operation.value === undefined) {
    throw badValue(`An ${operation.op} operation needs a value`);
  }
  if (operation.path !== undefined) {
    applyAt(resource, operation.op, parsePatchPath(operation.path), operation.value, work);
    return;
  }
  if (operation.op === "remove") throw noTarget("A remove operation needs a path");
  const value = operation.value;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw badValue(`An ${operation.op} without a path takes an object of attributes`);
  }
  for (const [key, item] of Object.entries(value)) {
    if (isPrototypeKey(key) || key.toLowerCase() === "schemas") continue;
    const lower = key.toLowerCase();
    // The enterprise extension given whole: each of its attributes in turn.
    if (lower === enterpriseSchema.toLowerCase() || lower === userSchema.toLowerCase()) {
      if (typeof item !== "object" || item === null || Array.isArray(item)) {
        throw badValue(`${key} must be an object`);
      }
      for (const [name, inner] of Object.entries(item)) {
        if (isPrototypeKey(name)) continue;
        applyAt(resource, operation.op, parsePatchPath(`${key}:${name}`), inner, work);
      }
      continue;
    }
    // A key that is itself a path (Entra: "name.givenName", a URN-qualified attribute).
    applyAt(resource, operation.op, parsePatchPath(key), item, work);
  }
}

/** The object holding a path's attributes (created for add and replace), and their definitions. */
function containerOf(
  resource: JsonObject,
  path: AttributePath,
  create: boolean,
): { container: JsonObject | undefined; attributes: readonly AttributeDefinition[] | undefined } {
  if (path.schema === undefined || path.schema === userSchema) {
    return { container: resource, attributes: userAttributes };
  }
  const key = ownKey(resource, path.schema);
  let container = key === undefined ? undefined : resource[key];
  if ((typeof container !== "object" || container === null) && create) {
    container = plainObject();
    setOwn(resource, path.schema, container);
  }
  return {
    container: container as JsonObject | undefined,
    attributes: path.schema === enterpriseSchema ? enterpriseAttributes : undefined,
  };
}

function applyAt(
  resource: JsonObject,
  op: PatchOperation["op"],
  parsed: PatchPath,
  value: unknown,
  work: PatchWork,
): void {
  const { path } = parsed;
  if (isPrototypeKey(path.attribute) || (path.subAttribute && isPrototypeKey(path.subAttribute))) {
    throw badPath(`The PATCH path names "${path.attribute}", which is not an attribute`);
  }
  if (parsed.subAttribute !== undefined && isPrototypeKey(parsed.subAttribute)) {
    throw badPath(`The PATCH path names "${parsed.subAttribute}", which is not an attribute`);
  }
  if (path.schema !== undefined && path.schema !== userSchema && path.schema !== enterpriseSchema) {
    if (path.schema.toLowerCase().startsWith("urn:ietf:params:scim:schemas:core:")) {
      throw badPath(`The schema ${path.schema} is not one of this resource's`);
    }
  }
  const { container, attributes } = containerOf(resource, path, op !== "remove");
  const definition = attributeOf(attributes, path.attribute);
  if (attributes !== undefined && definition === undefined) {
    // `schemas` is computed from the resource: an operation on it changes nothing.
    if (path.attribute.toLowerCase() === "schemas") return;
    throw badPath(`"${path.attribute}" is not an attribute of the User schema`);
  }
  if (definition?.mutability === "readOnly") {
    throw mutability(`${definition.name} is read-only`);
  }
  // A write-only attribute (the password) is never stored: this server has no place that may
  // keep it (docs/scim.md), so an operation on it, with or without a path, changes nothing.
  if (definition !== undefined && skippedOnWrite(definition)) return;
  if (container === undefined) return; // remove inside an absent extension: nothing to remove
  const name = definition?.name ?? ownKey(container, path.attribute) ?? path.attribute;
  const existing = container[name];
  // Every operation on a multi-valued attribute goes over its values at least once.
  spend(work, 1 + (Array.isArray(existing) ? existing.length : 0));
  if (parsed.filter !== undefined) {
    if (definition !== undefined && !definition.multiValued) {
      throw badPath(`${name} is not multi-valued: it takes no value filter`);
    }
    const target = { container, name, definition, op, work };
    applyFiltered(target, parsed.filter, parsed.subAttribute, value);
    return;
  }
  if (path.subAttribute !== undefined) {
    applySub(container, name, definition, op, path.subAttribute, value);
    return;
  }
  if (op === "remove") {
    removeAt(container, name, definition, value, work);
    return;
  }
  const normalized = normalizeValue(definition, value, name);
  if (
    definition?.type === "complex" &&
    !definition.multiValued &&
    typeof existing === "object" &&
    existing !== null &&
    (normalized !== undefined || isObject(value))
  ) {
    // Both add and replace merge the given sub-attributes and keep the others (§3.5.2.1, .3).
    const merged = mergedComplex(existing, normalized as JsonObject, value, op, definition);
    if (merged === undefined) delete container[name];
    else setOwn(container, name, merged);
    return;
  }
  if (normalized === undefined) {
    // A replace with null or [] unassigns (RFC 7643 §2.5: null and [] are unassigned). A value
    // that holds nothing once its dropped keys are gone ([{}], {"__proto__": …}) changes
    // nothing, nor does anything an add gives: an add never removes.
    const unassigns = value === null || (Array.isArray(value) && value.length === 0);
    if (op === "replace" && unassigns) delete container[name];
    return;
  }
  if (definition?.multiValued && op === "add") {
    // Values already there, or given twice (their keys in any order), are added once: each
    // value's key computed once in the request, so the work grows with the values and their size,
    // not with their square nor with the operations that read them.
    const old = Array.isArray(existing) ? existing : [];
    const seen = new Set(old.map((item) => keyOf(item, work)));
    const added = (normalized as unknown[]).filter((item) => {
      const key = keyOf(item, work);
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
    setOwn(container, name, onePrimary([...old, ...added]));
    return;
  }
  setOwn(container, name, normalized);
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * A remove of a whole attribute; with a value list on a multi-valued one (Entra's form), of the
 * values listed only.
 */
function removeAt(
  container: JsonObject,
  name: string,
  definition: AttributeDefinition | undefined,
  value: unknown,
  work: PatchWork,
): void {
  const existing = container[name];
  if (
    value === undefined ||
    value === null ||
    !Array.isArray(existing) ||
    (definition !== undefined && !definition.multiValued)
  ) {
    delete container[name];
    return;
  }
  const single = definition === undefined ? undefined : { ...definition, multiValued: false };
  const given = (Array.isArray(value) ? value : [value])
    .map((item) => normalizeValue(single, item, name))
    .filter((item) => item !== undefined);
  const kept = withoutValues(existing, given, definition?.subAttributes, work);
  if (kept.length === 0) delete container[name];
  else setOwn(container, name, kept);
}

function applySub(
  container: JsonObject,
  name: string,
  definition: AttributeDefinition | undefined,
  op: PatchOperation["op"],
  subAttribute: string,
  value: unknown,
): void {
  if (definition !== undefined && definition.type !== "complex") {
    throw badPath(`${name} has no sub-attributes`);
  }
  const sub = attributeOf(definition?.subAttributes, subAttribute);
  if (definition !== undefined && sub === undefined) {
    throw badPath(`${name}.${subAttribute} is not an attribute`);
  }
  const subName = sub?.name ?? subAttribute;
  const existing = container[name];
  if (definition?.multiValued) {
    // `emails.value`: the sub-attribute of every value.
    if (!Array.isArray(existing)) {
      if (op === "remove") return;
      throw noTarget(`${name} has no values to set ${subName} on`);
    }
    const normalized =
      op === "remove" ? undefined : normalizeValue(sub, value, `${name}.${subName}`);
    if (normalized === undefined && op === "add") return; // an add never removes
    setOwn(
      container,
      name,
      onePrimary(existing.map((item) => withSub(item as JsonObject, subName, normalized))),
    );
    return;
  }
  if (op === "remove") {
    if (typeof existing === "object" && existing !== null) {
      const copy = withSub(existing as JsonObject, subName, undefined);
      if (Object.keys(copy).length === 0) delete container[name];
      else setOwn(container, name, copy);
    }
    return;
  }
  const normalized = normalizeValue(sub, value, `${name}.${subName}`);
  if (normalized === undefined && op === "add") return; // an add never removes
  const base =
    typeof existing === "object" && existing !== null ? (existing as JsonObject) : plainObject();
  const updated = withSub(base, subName, normalized);
  if (Object.keys(updated).length === 0) delete container[name];
  else setOwn(container, name, updated);
}

function withSub(item: JsonObject, subName: string, value: unknown): JsonObject {
  const copy = plainObject();
  for (const [key, old] of Object.entries(item)) if (key !== subName) setOwn(copy, key, old);
  if (value !== undefined) setOwn(copy, subName, value);
  return copy;
}

/** The multi-valued attribute an operation with a value filter works on. */
interface FilteredTarget {
  readonly container: JsonObject;
  readonly name: string;
  readonly definition: AttributeDefinition | undefined;
  readonly op: PatchOperation["op"];
  readonly work: PatchWork;
}

function applyFiltered(
  target: FilteredTarget,
  filter: Filter,
  subAttribute: string | undefined,
  value: unknown,
): void {
  const { container, name, definition, op, work } = target;
  const subAttributes = definition?.subAttributes ?? [];
  const sub = subAttribute === undefined ? undefined : attributeOf(subAttributes, subAttribute);
  if (subAttribute !== undefined && definition !== undefined && sub === undefined) {
    throw badPath(`${name}.${subAttribute} is not an attribute`);
  }
  const subName = sub?.name ?? subAttribute;
  const existing = Array.isArray(container[name]) ? (container[name] as JsonObject[]) : [];
  spend(work, existing.length * termsOf(filter));
  // Each value's verdict computed once, whatever the operation does with it.
  const hits = existing.map(
    (item) => typeof item === "object" && item !== null && matches(filter, item, subAttributes),
  );
  const matched = hits.some(Boolean);
  if (op === "remove") {
    const kept =
      subName === undefined
        ? existing.filter((_, index) => !hits[index])
        : existing.map((item, index) => (hits[index] ? withSub(item, subName, undefined) : item));
    if (kept.length === 0) delete container[name];
    else setOwn(container, name, kept);
    return;
  }
  if (subName !== undefined) {
    const normalized = normalizeValue(sub, value, `${name}.${subName}`);
    if (normalized === undefined && (op === "add" || !matched)) return; // nothing to unassign
    if (!matched) {
      // Entra adds `emails[type eq "work"].value` to a user without a work email, expecting the
      // value to be created: a filter of `eq` comparisons alone says what the new value is.
      const seed = seedOf(filter);
      if (seed === undefined) throw noTarget(`No value of ${name} matches the PATCH path's filter`);
      setOwn(seed, subName, normalized);
      setOwn(container, name, primaryAfter([...existing, seed], [...hits, true]));
      return;
    }
    const updated = existing.map((item, index) =>
      hits[index] ? withSub(item, subName, normalized) : item,
    );
    setOwn(container, name, primaryAfter(updated, hits));
    return;
  }
  if (!matched) throw noTarget(`No value of ${name} matches the PATCH path's filter`);
  const normalized = normalizeValue(
    definition === undefined ? undefined : { ...definition, multiValued: false },
    value,
    name,
  );
  if (typeof normalized !== "object" || normalized === null) {
    throw badValue(`${name}[…] takes an object`);
  }
  const updated = existing.map((item, index) => {
    if (!hits[index]) return item;
    return op === "add" ? { ...item, ...(normalized as JsonObject) } : (normalized as JsonObject);
  });
  setOwn(container, name, primaryAfter(updated, hits));
}

/** The value a filter of `eq` comparisons joined by `and` describes, or undefined. */
function seedOf(filter: Filter): JsonObject | undefined {
  if (filter.op === "and") {
    const left = seedOf(filter.left);
    const right = seedOf(filter.right);
    return left && right ? { ...left, ...right } : undefined;
  }
  if (
    filter.op !== "eq" ||
    filter.path.subAttribute !== undefined ||
    filter.path.schema !== undefined
  ) {
    return undefined;
  }
  if (isPrototypeKey(filter.path.attribute)) return undefined;
  const seed = plainObject();
  setOwn(seed, filter.path.attribute, filter.value);
  return seed;
}

export { ScimError };
