import type { Client, Control } from "ldapts";
import {
  decodeSyncDone,
  decodeSyncInfo,
  decodeSyncState,
  encodeSyncRequest,
  type SyncDoneValue,
  type SyncInfoValue,
  SyncProtocolError,
  type SyncStateValue,
} from "./content-sync-values.ts";

// LDAP Content Synchronization (RFC 4533), refreshOnly, on top of ldapts. ldapts parses the
// controls of entries but not the Intermediate Response that carries syncInfo messages: its
// message parser throws on it, and its client resolves a search on any message that is not an
// entry. So the client's parser is wrapped, for the searches that carry our Sync Request Control
// only: entries are handed to the caller as they arrive (the client never accumulates them) and
// syncInfo messages are decoded (content-sync-values.ts). No other search is touched.

/** The Sync Request Control's OID: the root DSE lists it where Content Sync is offered. */
export const syncRequestOid = "1.3.6.1.4.1.4203.1.9.1.1";
const syncStateOid = "1.3.6.1.4.1.4203.1.9.1.2";
const syncDoneOid = "1.3.6.1.4.1.4203.1.9.1.3";
const syncInfoOid = "1.3.6.1.4.1.4203.1.9.1.4";
/** e-syncRefreshRequired: the server cannot serve the cookie; a full read must start over. */
export const refreshRequired = 4096;

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
