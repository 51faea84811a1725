// The filter grammar of RFC 7644 §3.4.2.2 and the PATCH path grammar of §3.5.2 (which embeds it):
// a tokenizer and a recursive-descent parser with the RFC's precedence (grouping, then not, and,
// or); the evaluation of a parsed filter is in evaluate.ts. Written here rather than taken from
// npm: the packages for it are unmaintained forks of one another, and this is ~300 lines.
//
// Hostile input is bounded: a filter or path longer than `maxFilterLength` characters or nested
// deeper than `maxFilterDepth` is refused with 400 `invalidFilter` (`invalidPath` for a path)
// before any recursion could exhaust the stack.
import { badFilter, badPath, type ScimError } from "./errors.ts";
import { type AttributeDefinition, attributeOf, attributesOfSchema, schemaOf } from "./schemas.ts";

/** The longest filter or PATCH path read, in characters. */
export const maxFilterLength = 4096;
/** The deepest nesting of parentheses, `not` and value filters a filter may have. */
export const maxFilterDepth = 16;

/** A comparison operator of the filter grammar. */
export type CompareOperator = "eq" | "ne" | "co" | "sw" | "ew" | "gt" | "lt" | "ge" | "le";
/** A JSON scalar a comparison takes. */
export type CompareValue = string | number | boolean | null;

/**
 * An attribute path: `[URI ":"] ATTRNAME [ "." subAttr ]`. `schema` is the canonical URN when the
 * path names one of the User schemas, the URN as written otherwise; names are as written.
 */
export interface AttributePath {
  readonly schema: string | undefined;
  readonly attribute: string;
  readonly subAttribute: string | undefined;
}

/** A parsed filter (RFC 7644 §3.4.2.2). */
export type Filter =
  | { readonly op: "and" | "or"; readonly left: Filter; readonly right: Filter }
  | { readonly op: "not"; readonly filter: Filter }
  | { readonly op: "pr"; readonly path: AttributePath }
  | {
      readonly op: CompareOperator;
      readonly path: AttributePath;
      readonly value: CompareValue;
    }
  /** `attr[valFilter]`: some value of the multi-valued `attr` matches `filter`. */
  | { readonly op: "[]"; readonly path: AttributePath; readonly filter: Filter };

/** A parsed PATCH path: an attribute path, or a value path with an optional sub-attribute. */
export interface PatchPath {
  readonly path: AttributePath;
  /** The value filter of `attr[filter]`, when the path has one. */
  readonly filter: Filter | undefined;
  /** The sub-attribute after a value filter: `emails[type eq "work"].value`. */
  readonly subAttribute: string | undefined;
}

type Token =
  | { kind: "word"; text: string; at: number }
  | { kind: "string"; value: string; at: number }
  | { kind: "number"; value: number; at: number }
  | { kind: "(" | ")" | "[" | "]"; at: number };

const compareOperators = new Set(["eq", "ne", "co", "sw", "ew", "gt", "lt", "ge", "le"]);
// An attribute path, a keyword or a literal: letters, digits, and what URNs and sub-attributes
// add ("$ref" starts with a dollar sign).
const wordPattern = /[A-Za-z$.][A-Za-z0-9_$:.-]*/y;
const numberPattern = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const namePattern = /^[A-Za-z$][A-Za-z0-9_\-$]*$/;

function tokenize(text: string, fail: (detail: string) => ScimError): Token[] {
  const tokens: Token[] = [];
  let at = 0;
  while (at < text.length) {
    const char = text[at] as string;
    if (char === " " || char === "\t" || char === "\n" || char === "\r") {
      at++;
      continue;
    }
    if (char === "(" || char === ")" || char === "[" || char === "]") {
      tokens.push({ kind: char, at });
      at++;
      continue;
    }
    if (char === '"') {
      const end = stringEnd(text, at);
      let value: unknown;
      try {
        value = end === -1 ? undefined : JSON.parse(text.slice(at, end + 1));
      } catch {
        // JSON's own rules: no control character, only its escapes.
      }
      if (typeof value !== "string") {
        throw fail(`an unterminated or invalid string at character ${at + 1}`);
      }
      tokens.push({ kind: "string", value, at });
      at = end + 1;
      continue;
    }
    if (char === "-" || (char >= "0" && char <= "9")) {
      numberPattern.lastIndex = at;
      const match = numberPattern.exec(text);
      if (match === null) throw fail(`an invalid number at character ${at + 1}`);
      tokens.push({ kind: "number", value: Number(match[0]), at });
      at += match[0].length;
      continue;
    }
    wordPattern.lastIndex = at;
    const match = wordPattern.exec(text);
    if (match === null) throw fail(`an unexpected character at character ${at + 1}`);
    tokens.push({ kind: "word", text: match[0], at });
    at += match[0].length;
  }
  return tokens;
}

/** The index of the quote closing the JSON string opened at `start`, or -1. */
function stringEnd(text: string, start: number): number {
  for (let at = start + 1; at < text.length; at++) {
    const char = text[at];
    if (char === "\\") at++;
    else if (char === '"') return at;
  }
  return -1;
}

/** Reads `[URI ":"] ATTRNAME ["." subAttr]` from one word token. */
function attributePathOf(word: string, fail: (detail: string) => ScimError): AttributePath {
  let schema: string | undefined;
  let rest = word;
  const colon = word.lastIndexOf(":");
  if (colon !== -1) {
    const urn = word.slice(0, colon);
    schema = schemaOf(urn) ?? urn;
    rest = word.slice(colon + 1);
  }
  const parts = rest.split(".");
  if (parts.length > 2 || !parts.every((part) => namePattern.test(part))) {
    throw fail(`"${word}" is not an attribute path`);
  }
  if (schema !== undefined && parts[0] === "") throw fail(`"${word}" names no attribute`);
  return { schema, attribute: parts[0] as string, subAttribute: parts[1] };
}

/** A cursor over the tokens of one filter, with the depth of the nesting it is in. */
class Parser {
  #at = 0;
  #depth = 0;
  readonly tokens: Token[];
  readonly fail: (detail: string) => ScimError;

  constructor(tokens: Token[], fail: (detail: string) => ScimError) {
    this.tokens = tokens;
    this.fail = fail;
  }

  get done(): boolean {
    return this.#at >= this.tokens.length;
  }

  peek(): Token | undefined {
    return this.tokens[this.#at];
  }

  next(): Token {
    const token = this.tokens[this.#at++];
    if (token === undefined) throw this.fail("it ends too early");
    return token;
  }

  keyword(...words: string[]): string | undefined {
    const token = this.peek();
    if (token?.kind !== "word") return undefined;
    const lower = token.text.toLowerCase();
    if (!words.includes(lower)) return undefined;
    this.#at++;
    return lower;
  }

  expect(kind: "(" | ")" | "[" | "]"): void {
    const token = this.next();
    if (token.kind !== kind) throw this.fail(`expected "${kind}" at character ${token.at + 1}`);
  }

  nested<T>(read: () => T): T {
    if (++this.#depth > maxFilterDepth) {
      throw this.fail(`it is nested deeper than ${maxFilterDepth} levels`);
    }
    const result = read();
    this.#depth--;
    return result;
  }

  /** FILTER, with or below and (so `a or b and c` is `a or (b and c)`). */
  filter(): Filter {
    let left = this.conjunction();
    while (this.keyword("or") !== undefined) left = { op: "or", left, right: this.conjunction() };
    return left;
  }

  conjunction(): Filter {
    let left = this.unary();
    while (this.keyword("and") !== undefined) left = { op: "and", left, right: this.unary() };
    return left;
  }

  unary(): Filter {
    if (this.keyword("not") !== undefined) {
      this.expect("(");
      const filter = this.nested(() => this.filter());
      this.expect(")");
      return { op: "not", filter };
    }
    const token = this.next();
    if (token.kind === "(") {
      const filter = this.nested(() => this.filter());
      this.expect(")");
      return filter;
    }
    if (token.kind !== "word")
      throw this.fail(`expected an attribute at character ${token.at + 1}`);
    const path = attributePathOf(token.text, this.fail);
    if (this.peek()?.kind === "[") {
      if (path.subAttribute !== undefined) {
        throw this.fail(`"${token.text}" cannot take a value filter`);
      }
      this.next();
      const inner = this.nested(() => this.filter());
      this.expect("]");
      const valuePath: Filter = { op: "[]", path, filter: inner };
      // `emails[type eq "work"].value eq "x"`: not in the RFC's grammar, but what Entra sends to
      // find a user by its work email; read as the value filter and the comparison together.
      const after = this.peek();
      if (after?.kind === "word" && after.text.startsWith(".")) {
        this.next();
        const sub = after.text.slice(1);
        if (!namePattern.test(sub)) throw this.fail(`"${after.text}" is not a sub-attribute`);
        const subPath: AttributePath = {
          schema: path.schema,
          attribute: sub,
          subAttribute: undefined,
        };
        const comparison = this.comparison(subPath);
        return { op: "[]", path, filter: { op: "and", left: inner, right: comparison } };
      }
      return valuePath;
    }
    return this.comparison(path);
  }

  comparison(path: AttributePath): Filter {
    const operator = this.next();
    if (operator.kind !== "word") {
      throw this.fail(`expected an operator at character ${operator.at + 1}`);
    }
    const op = operator.text.toLowerCase();
    if (op === "pr") return { op: "pr", path };
    if (!compareOperators.has(op)) throw this.fail(`"${operator.text}" is not an operator`);
    const value = this.next();
    let compared: CompareValue;
    if (value.kind === "string" || value.kind === "number") compared = value.value;
    else if (
      value.kind === "word" &&
      ["true", "false", "null"].includes(value.text.toLowerCase())
    ) {
      compared = JSON.parse(value.text.toLowerCase()) as boolean | null;
    } else throw this.fail(`expected a value after "${operator.text}"`);
    return { op: op as CompareOperator, path, value: compared };
  }
}

function checkedLength(text: string, fail: (detail: string) => ScimError): void {
  if (text.length > maxFilterLength) throw fail(`it is longer than ${maxFilterLength} characters`);
}

/**
 * Parses a filter (the `filter` query parameter).
 *
 * @throws ScimError 400 `invalidFilter` saying what is wrong.
 */
export function parseFilter(text: string): Filter {
  const filter = parseUnchecked(text);
  checkOrdering(filter, undefined);
  return filter;
}

const filterFailure = (detail: string) => badFilter(`The filter is not valid: ${detail}`);

function parseUnchecked(text: string): Filter {
  checkedLength(text, filterFailure);
  const parser = new Parser(tokenize(text, filterFailure), filterFailure);
  if (parser.done) throw filterFailure("it is empty");
  const filter = parser.filter();
  if (!parser.done) {
    throw filterFailure(`unexpected text at character ${(parser.peek() as Token).at + 1}`);
  }
  return filter;
}

const orderings = new Set<string>(["gt", "ge", "lt", "le"]);

/**
 * RFC 7644 §3.4.2.2: `gt`, `ge`, `lt` and `le` on a boolean or binary attribute "SHALL cause a
 * failed response (HTTP status code 400) with scimType of invalidFilter", and so does one with a
 * boolean value: checked on the parsed filter, so the answer does not depend on which users exist.
 * `scope` is the sub-attributes of the value filter's attribute, undefined at the top.
 */
function checkOrdering(filter: Filter, scope: readonly AttributeDefinition[] | undefined): void {
  switch (filter.op) {
    case "and":
    case "or":
      checkOrdering(filter.left, scope);
      checkOrdering(filter.right, scope);
      return;
    case "not":
      checkOrdering(filter.filter, scope);
      return;
    case "pr":
      return;
    case "[]":
      checkOrdering(filter.filter, definitionAt(filter.path, scope)?.subAttributes ?? []);
      return;
  }
  if (!orderings.has(filter.op)) return;
  const definition = definitionAt(filter.path, scope);
  // The attribute compared: a sub-attribute, or a multi-valued attribute's `value`.
  const leaf =
    filter.path.subAttribute !== undefined
      ? attributeOf(definition?.subAttributes, filter.path.subAttribute)
      : definition?.type === "complex" && definition.multiValued
        ? attributeOf(definition.subAttributes, "value")
        : definition;
  if (typeof filter.value === "boolean" || leaf?.type === "boolean" || leaf?.type === "binary") {
    throw filterFailure(
      `"${filter.op}" orders values, and booleans and binary values have no order (RFC 7644 §3.4.2.2)`,
    );
  }
}

/** The definition of a path's attribute, as evaluate.ts looks it up; undefined when unknown. */
function definitionAt(
  path: AttributePath,
  scope: readonly AttributeDefinition[] | undefined,
): AttributeDefinition | undefined {
  if (scope !== undefined && path.schema === undefined) return attributeOf(scope, path.attribute);
  return attributeOf(attributesOfSchema(path.schema), path.attribute);
}

/**
 * Parses a PATCH operation's `path` (RFC 7644 §3.5.2): `attrPath`, or `valuePath [subAttr]`.
 *
 * @throws ScimError 400 `invalidPath` saying what is wrong (`invalidFilter` inside the brackets).
 */
export function parsePatchPath(text: string): PatchPath {
  const fail = (detail: string) => badPath(`The PATCH path is not valid: ${detail}`);
  checkedLength(text, fail);
  const open = text.indexOf("[");
  if (open === -1) {
    const word = text.trim();
    if (word === "" || !/^[A-Za-z$][A-Za-z0-9_$:.-]*$/.test(word)) {
      throw fail(`"${text}" is not an attribute path`);
    }
    return { path: attributePathOf(word, fail), filter: undefined, subAttribute: undefined };
  }
  const close = text.lastIndexOf("]");
  if (close < open) throw fail("a value filter is not closed");
  const path = attributePathOf(text.slice(0, open).trim(), fail);
  if (path.subAttribute !== undefined) throw fail("a sub-attribute cannot take a value filter");
  const inner = text.slice(open + 1, close);
  const after = text.slice(close + 1);
  let subAttribute: string | undefined;
  if (after !== "") {
    if (!after.startsWith(".") || !namePattern.test(after.slice(1))) {
      throw fail(`"${after}" after the value filter is not a sub-attribute`);
    }
    subAttribute = after.slice(1);
  }
  const filter = parseUnchecked(inner);
  checkOrdering(filter, definitionAt(path, undefined)?.subAttributes ?? []);
  return { path, filter, subAttribute };
}
