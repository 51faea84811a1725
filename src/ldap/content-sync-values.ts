// The values of LDAP Content Synchronization (RFC 4533) in BER: the syncStateValue on entries,
// the syncDoneValue on SearchResultDone, the syncInfoValue of Intermediate Responses, and the
// syncRequestValue this client sends. They are read by the small BER reader below rather than
// ldapts's BerReader: ldapts is an optional peer loaded on the first connection, and these
// decoders are tested on hand-made bytes alone. content-sync.ts carries them over ldapts.

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
