import type { Client, Control } from "ldapts";

// LDAP Content Synchronization (RFC 4533), refreshOnly, on top of ldapts. ldapts parses the
// controls of entries but not the Intermediate Response that carries syncInfo messages: its
// message parser throws on it, and its client resolves a search on any message that is not an
// entry. So the client's parser is wrapped, for the searches that carry our Sync Request Control
// only: entries are handed to the caller as they arrive (the client never accumulates them) and
// syncInfo messages are decoded here. No other search is touched. The three RFC 4533 values are
// decoded by the small BER reader below rather than ldapts's BerReader: ldapts is an optional
// peer loaded on the first connection, and the decoders are tested on hand-made bytes alone.

/** The Sync Request Control's OID: the root DSE lists it where Content Sync is offered. */
export const syncRequestOid = "1.3.6.1.4.1.4203.1.9.1.1";
const syncStateOid = "1.3.6.1.4.1.4203.1.9.1.2";
const syncDoneOid = "1.3.6.1.4.1.4203.1.9.1.3";
const syncInfoOid = "1.3.6.1.4.1.4203.1.9.1.4";
/** e-syncRefreshRequired: the server cannot serve the cookie; a full read must start over. */
export const refreshRequired = 4096;

/** An entry's state in the syncStateValue. */
export type SyncState = "present" | "add" | "modify" | "delete";
const states: readonly SyncState[] = ["present", "add", "modify", "delete"];

/** syncStateValue: an entry's state and its entryUUID (RFC 4533 2.2). */
export interface SyncStateValue {
  state: SyncState;
  uuid: string;
  cookie?: Uint8Array;
}

/** syncDoneValue: the cookie to resume from, and whether the refresh ended in a delete phase. */
export interface SyncDoneValue {
  cookie?: Uint8Array;
  refreshDeletes: boolean;
}

/** syncInfoValue (RFC 4533 2.5): a new cookie, the end of a phase, or a set of uuids. */
export type SyncInfoValue =
  | { kind: "newCookie"; cookie: Uint8Array }
  | { kind: "refreshDelete" | "refreshPresent"; cookie?: Uint8Array; refreshDone: boolean }
  | { kind: "syncIdSet"; cookie?: Uint8Array; refreshDeletes: boolean; uuids: string[] };

/** A malformed sync control or message: the server and this client disagree on RFC 4533. */
export class SyncProtocolError extends Error {
  override readonly name = "SyncProtocolError";
}

interface Tlv {
  tag: number;
  value: Uint8Array;
}

/** The TLVs of a BER value, in order (definite lengths only, as LDAP requires). */
function elements(bytes: Uint8Array): Tlv[] {
  const out: Tlv[] = [];
  let offset = 0;
  while (offset < bytes.length) {
    const tag = bytes[offset++] as number;
    let length = bytes[offset++];
    if (length === undefined) throw new SyncProtocolError("BER value cut short");
    if (length & 0x80) {
      const count = length & 0x7f;
      if (count === 0 || count > 4) throw new SyncProtocolError("unsupported BER length");
      length = 0;
      for (let index = 0; index < count; index++) {
        const byte = bytes[offset++];
        if (byte === undefined) throw new SyncProtocolError("BER value cut short");
        length = length * 256 + byte;
      }
    }
    if (offset + length > bytes.length) throw new SyncProtocolError("BER value cut short");
    out.push({ tag, value: bytes.subarray(offset, offset + length) });
    offset += length;
  }
  return out;
}

/** The one SEQUENCE (or constructed, context-tagged) value of `bytes`: its elements. */
function sequence(bytes: Uint8Array, tag = 0x30): Tlv[] {
  const [only, ...rest] = elements(bytes);
  if (!only || only.tag !== tag || rest.length > 0) {
    throw new SyncProtocolError(`expected a constructed value tagged 0x${tag.toString(16)}`);
  }
  return elements(only.value);
}

/** The syncUUID's 16 bytes in the entryUUID attribute's spelling (RFC 4530: lowercase). */
export function uuidString(bytes: Uint8Array): string {
  if (bytes.length !== 16) throw new SyncProtocolError("a syncUUID is 16 bytes");
  const hex = Buffer.from(bytes).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Reads `[cookie OCTET STRING OPTIONAL, flag BOOLEAN DEFAULT fallback]` from the front of `items`. */
function cookieAndFlag(items: Tlv[], fallback: boolean) {
  let cookie: Uint8Array | undefined;
  let flag = fallback;
  let next = items.shift();
  if (next?.tag === 0x04) {
    cookie = next.value;
    next = items.shift();
  }
  if (next?.tag === 0x01) {
    flag = next.value[0] !== 0;
    next = items.shift();
  }
  if (next) items.unshift(next);
  return { ...(cookie && { cookie }), flag };
}

/** Decodes a syncStateValue (the value of the Sync State Control on an entry). */
export function decodeSyncState(bytes: Uint8Array): SyncStateValue {
  const [state, uuid, cookie] = sequence(bytes);
  const index = state?.tag === 0x0a && state.value.length === 1 ? (state.value[0] as number) : -1;
  const name = states[index];
  if (!name || uuid?.tag !== 0x04) throw new SyncProtocolError("malformed syncStateValue");
  return {
    state: name,
    uuid: uuidString(uuid.value),
    ...(cookie?.tag === 0x04 && { cookie: cookie.value }),
  };
}

/** Decodes a syncDoneValue (the value of the Sync Done Control on SearchResultDone). */
export function decodeSyncDone(bytes: Uint8Array): SyncDoneValue {
  const { cookie, flag } = cookieAndFlag(sequence(bytes), false);
  return { ...(cookie && { cookie }), refreshDeletes: flag };
}

/** Decodes a syncInfoValue (the value of the syncInfo Intermediate Response). */
export function decodeSyncInfo(bytes: Uint8Array): SyncInfoValue {
  const [choice, ...rest] = elements(bytes);
  if (!choice || rest.length > 0) throw new SyncProtocolError("malformed syncInfoValue");
  if (choice.tag === 0x80) return { kind: "newCookie", cookie: choice.value };
  const items = elements(choice.value);
  if (choice.tag === 0xa1 || choice.tag === 0xa2) {
    const { cookie, flag } = cookieAndFlag(items, true);
    const kind = choice.tag === 0xa1 ? "refreshDelete" : "refreshPresent";
    return { kind, ...(cookie && { cookie }), refreshDone: flag };
  }
  if (choice.tag === 0xa3) {
    const { cookie, flag } = cookieAndFlag(items, false);
    const [set] = items;
    if (set?.tag !== 0x31) throw new SyncProtocolError("malformed syncIdSet");
    const uuids = elements(set.value).map((item) => uuidString(item.value));
    return { kind: "syncIdSet", ...(cookie && { cookie }), refreshDeletes: flag, uuids };
  }
  throw new SyncProtocolError(`unknown syncInfoValue choice 0x${choice.tag.toString(16)}`);
}

function tlv(tag: number, value: Uint8Array): Uint8Array {
  const length =
    value.length < 0x80
      ? [value.length]
      : value.length < 0x100
        ? [0x81, value.length]
        : [0x82, value.length >> 8, value.length & 0xff];
  return Buffer.concat([Uint8Array.of(tag, ...length), value]);
}

/** Encodes a syncRequestValue for refreshOnly, resuming from `cookie` when there is one. */
export function encodeSyncRequest(cookie?: Uint8Array): Uint8Array {
  const mode = tlv(0x0a, Uint8Array.of(1));
  return tlv(0x30, Buffer.concat(cookie ? [mode, tlv(0x04, cookie)] : [mode]));
}

/** What a refreshOnly search hands its caller, as the server sends it. */
export interface SyncSearchHandlers {
  /** An entry, as ldapts's `search` returns entries, with its sync state. */
  entry(
    raw: { dn: string; [attribute: string]: string | string[] | Buffer | Buffer[] },
    state: SyncStateValue,
  ): void;
  info(value: SyncInfoValue): void;
}

// ldapts's internals this module relies on, checked before use (see hookClient).
interface ParsedMessage {
  controls?: { type: string; value?: unknown }[];
  toObject?(attributes: string[], explicitBufferAttributes: string[]): never;
}
interface Reader {
  offset: number;
  length: number;
  readString(tag: number, asBuffer: true): Buffer | null;
  peek(): number | null;
}
interface Parser {
  emit(event: string, ...args: unknown[]): boolean;
  _getMessageFromProtocolOperation(
    messageId: number,
    operation: number,
    reader: Reader,
    request?: { controls?: unknown[] },
  ): ParsedMessage;
}
interface Writer {
  writeString(value: string): void;
  writeBoolean(value: boolean): void;
  writeBuffer(value: Buffer, tag: number): void;
  startSequence(): void;
  endSequence(): void;
}

/** Our control on a search request, and what to do with what comes back for it. */
class SyncRequest {
  readonly type = syncRequestOid;
  readonly responseType = syncRequestOid;
  readonly critical = true;
  done?: SyncDoneValue;
  readonly options: SyncSearchOptions;
  readonly handlers: SyncSearchHandlers;
  constructor(options: SyncSearchOptions, handlers: SyncSearchHandlers) {
    this.options = options;
    this.handlers = handlers;
  }
  write(writer: Writer) {
    writer.startSequence();
    writer.writeString(this.type);
    writer.writeBoolean(this.critical);
    writer.writeBuffer(Buffer.from(encodeSyncRequest(this.options.cookie)), 0x04);
    writer.endSequence();
  }
  parse() {}
}

/** A response control that keeps its raw value, for ldapts's ControlParser to fill in. */
function responseControl(type: string) {
  return {
    type,
    responseType: type,
    critical: false,
    value: undefined as Uint8Array | undefined,
    parse(reader: { remainingBuffer: Buffer }) {
      this.value = reader.remainingBuffer;
    },
  };
}

const hooked = new WeakSet<object>();
const searchEntry = 0x64;
const searchDone = 0x65;
const intermediate = 0x79;

/**
 * Teaches an ldapts client's message parser the syncInfo Intermediate Response and the sync
 * controls, for our sync searches only. False when this ldapts lacks the hook points (a future
 * version parsing differently): the caller then reads the whole directory instead.
 */
export function hookClient(client: object): boolean {
  const parser = (client as { messageParser?: Partial<Parser> }).messageParser;
  const parse = parser?._getMessageFromProtocolOperation;
  const emit = parser?.emit;
  if (!parser || typeof parse !== "function" || typeof emit !== "function") return false;
  if (hooked.has(parser)) return true;
  // Messages handled here and kept from the client: it would resolve the search on the first.
  const consumed = new WeakSet<object>();
  parser._getMessageFromProtocolOperation = function (messageId, operation, reader, request) {
    const sync = request?.controls?.find((control) => control instanceof SyncRequest);
    if (!(sync instanceof SyncRequest))
      return parse.call(this, messageId, operation, reader, request);
    if (operation === intermediate) {
      const end = reader.offset + reader.length;
      let name: string | undefined;
      let value: Buffer | undefined;
      if (reader.peek() === 0x80) name = reader.readString(0x80, true)?.toString();
      if (reader.offset < end && reader.peek() === 0x81)
        value = reader.readString(0x81, true) ?? undefined;
      // Controls of an intermediate response (none are defined for syncInfo) are skipped.
      reader.offset = end;
      if (name === syncInfoOid && value) sync.handlers.info(decodeSyncInfo(value));
      const message = {};
      consumed.add(message);
      return message;
    }
    const control = responseControl(operation === searchDone ? syncDoneOid : syncStateOid);
    const message = parse.call(this, messageId, operation, reader, { controls: [control] });
    if (operation === searchEntry) {
      if (!control.value || typeof message.toObject !== "function") {
        throw new SyncProtocolError("an entry came without its Sync State Control");
      }
      sync.handlers.entry(
        message.toObject(sync.options.attributes, sync.options.explicitBufferAttributes),
        decodeSyncState(control.value),
      );
      consumed.add(message);
    } else if (operation === searchDone && control.value) {
      sync.done = decodeSyncDone(control.value);
    }
    return message;
  };
  parser.emit = function (event, ...args) {
    if (event === "message" && consumed.has(args[0] as object)) return true;
    return emit.call(this, event, ...args);
  };
  hooked.add(parser);
  return true;
}

/** What a refreshOnly search ends with: the syncDoneValue (no cookie when the server sent none). */
export interface SyncSearchOptions {
  filter: string;
  attributes: string[];
  explicitBufferAttributes: string[];
  cookie?: Uint8Array | undefined;
}

/**
 * Runs one refreshOnly sync search on a client {@link hookClient} hooked, handing entries and
 * syncInfo messages to `handlers` as they arrive. Resolves with the syncDoneValue; rejects as
 * ldapts's search does (a result code error carries `code`: {@link refreshRequired} and others).
 */
export async function syncSearch(
  client: Pick<Client, "search">,
  baseDn: string,
  options: SyncSearchOptions,
  handlers: SyncSearchHandlers,
): Promise<SyncDoneValue> {
  const request = new SyncRequest(options, handlers);
  await client.search(
    baseDn,
    {
      scope: "sub",
      filter: options.filter,
      attributes: options.attributes,
      explicitBufferAttributes: options.explicitBufferAttributes,
    },
    [request as unknown as Control],
  );
  if (!request.done) throw new SyncProtocolError("the search ended without a Sync Done Control");
  return request.done;
}
