import type { Client } from "ldapts";

// Active Directory's DirSync control (LDAP_SERVER_DIRSYNC_OID, MS-ADTS 3.1.1.3.4.1.3), on ldapts:
// its message parser hands a response control to the request control of the same OID, so the
// control below is written with ldapts's BER writer and reads its answer with its BER reader.

/** LDAP_SERVER_DIRSYNC_OID: the root DSE's supportedControl lists it where DirSync is offered. */
export const dirSyncOid = "1.2.840.113556.1.4.841";

// ldapts's BER writer and reader, as far as this control uses them.
interface Writer {
  writeString(value: string): void;
  writeBoolean(value: boolean): void;
  writeInt(value: number): void;
  writeBuffer(value: Buffer, tag: number): void;
  startSequence(tag?: number): void;
  endSequence(): void;
}
interface Reader {
  readSequence(): number | null;
  readInt(): number | null;
  readString(tag: number, asBuffer: true): Buffer | null;
}

/**
 * The request: `SEQUENCE { flags INTEGER, maxBytes INTEGER, cookie OCTET STRING }`, with no
 * flag (the bind account must hold "Replicating Directory Changes" on the naming context). The
 * answer, `SEQUENCE { moreResults INTEGER, unused INTEGER, cookie OCTET STRING }`, is read into
 * `more` and `next`.
 */
export class DirSyncControl {
  readonly type = dirSyncOid;
  readonly responseType = dirSyncOid;
  readonly critical = true;
  readonly cookie: Uint8Array;
  /** Set from the server's answer: whether more changes wait, and the cookie to go on from. */
  more = false;
  next: Buffer | undefined;
  constructor(cookie: Uint8Array = new Uint8Array()) {
    this.cookie = cookie;
  }
  write(writer: Writer): void {
    writer.startSequence();
    writer.writeString(this.type);
    writer.writeBoolean(this.critical);
    writer.startSequence(0x04);
    writer.startSequence();
    writer.writeInt(0);
    // The most bytes an answer may hold: AD's own ceiling; it answers with moreResults beyond.
    writer.writeInt(0x100000);
    writer.writeBuffer(Buffer.from(this.cookie), 0x04);
    writer.endSequence();
    writer.endSequence();
    writer.endSequence();
  }
  parse(reader: Reader): void {
    reader.readSequence();
    this.more = (reader.readInt() ?? 0) !== 0;
    reader.readInt();
    this.next = reader.readString(0x04, true) ?? undefined;
  }
}

/** A changed (or deleted) object as DirSync tells it: its objectGUID, and whether it is deleted. */
export interface DirSyncChange {
  guid: Buffer;
  deleted: boolean;
}

/**
 * Every object of `namingContext` whose `attributes` changed since `cookie` (an empty cookie:
 * none are asked for, only the cookie of now, by a filter no object matches), and the cookie
 * that follows them. Stops early, with `overflow`, past `limit` changes.
 */
export async function dirSyncChanges(
  client: Client,
  namingContext: string,
  {
    cookie,
    attributes,
    limit,
  }: { cookie: Uint8Array | undefined; attributes: string[]; limit: number },
): Promise<{ changes: DirSyncChange[]; cookie: Buffer; overflow: boolean }> {
  const changes: DirSyncChange[] = [];
  let current: Uint8Array = cookie ?? new Uint8Array();
  for (;;) {
    const control = new DirSyncControl(current);
    const { searchEntries } = await client.search(
      namingContext,
      {
        scope: "sub",
        // Without a cookie, only the cookie is wanted: the no-GUID filter matches nothing.
        filter: cookie === undefined ? "(&(objectClass=*)(!(objectGUID=*)))" : "(objectClass=*)",
        attributes: ["objectGUID", "isDeleted", ...attributes],
        explicitBufferAttributes: ["objectGUID"],
      },
      // ldapts's Control type is a class; this control is written and read as one.
      [control as unknown as import("ldapts").Control],
    );
    for (const entry of searchEntries) {
      const guid = entry.objectGUID;
      if (!Buffer.isBuffer(guid) || guid.length !== 16) continue;
      changes.push({ guid, deleted: String(entry.isDeleted).toUpperCase() === "TRUE" });
    }
    if (control.next === undefined) throw new DirSyncError("the server sent no DirSync cookie");
    current = control.next;
    if (changes.length > limit) return { changes, cookie: control.next, overflow: true };
    if (!control.more) return { changes, cookie: control.next, overflow: false };
  }
}

/** The server answered DirSync without its control: it does not speak DirSync as AD does. */
export class DirSyncError extends Error {
  override readonly name = "DirSyncError";
}
