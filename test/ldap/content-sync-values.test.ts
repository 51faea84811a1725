// The RFC 4533 values, decoded from bytes made by hand from the ASN.1 of RFC 4533 section 2, so
// that a decoder agreeing only with itself cannot pass.
import { describe, expect, it } from "vitest";
import {
  decodeSyncDone,
  decodeSyncInfo,
  decodeSyncState,
  encodeSyncRequest,
  SyncProtocolError,
  uuidString,
} from "../../src/ldap/content-sync-values.ts";

const uuid1 = Array.from({ length: 16 }, (_, index) => index);
const uuid2 = Array.from({ length: 16 }, (_, index) => 0xf0 + (index % 16));
const text1 = "00010203-0405-0607-0809-0a0b0c0d0e0f";
const text2 = "f0f1f2f3-f4f5-f6f7-f8f9-fafbfcfdfeff";
const bytes = (...values: number[]) => Uint8Array.from(values);
const ascii = (text: string) => [...Buffer.from(text)];

describe("syncStateValue", () => {
  it("reads each state, the entryUUID in its attribute's spelling, and the optional cookie", () => {
    expect(decodeSyncState(bytes(0x30, 0x15, 0x0a, 0x01, 0x02, 0x04, 0x10, ...uuid1))).toEqual({
      state: "modify",
      uuid: text1,
    });
    const withCookie = decodeSyncState(
      bytes(0x30, 0x19, 0x0a, 0x01, 0x00, 0x04, 0x10, ...uuid2, 0x04, 0x02, ...ascii("ab")),
    );
    expect(withCookie).toMatchObject({ state: "present", uuid: text2 });
    expect(Buffer.from(withCookie.cookie as Uint8Array).toString()).toBe("ab");
    for (const [value, state] of [
      [1, "add"],
      [3, "delete"],
    ] as const) {
      expect(
        decodeSyncState(bytes(0x30, 0x15, 0x0a, 0x01, value, 0x04, 0x10, ...uuid1)).state,
      ).toBe(state);
    }
  });

  it("refuses an unknown state, a uuid that is not 16 bytes and a value cut short", () => {
    expect(() =>
      decodeSyncState(bytes(0x30, 0x15, 0x0a, 0x01, 0x04, 0x04, 0x10, ...uuid1)),
    ).toThrow(SyncProtocolError);
    expect(() =>
      decodeSyncState(bytes(0x30, 0x14, 0x0a, 0x01, 0x01, 0x04, 0x0f, ...uuid1.slice(1))),
    ).toThrow(/16 bytes/);
    expect(() => decodeSyncState(bytes(0x30, 0x15, 0x0a, 0x01, 0x01, 0x04, 0x10, 1, 2))).toThrow(
      /cut short/,
    );
  });
});

describe("syncDoneValue", () => {
  it("reads the cookie, and refreshDeletes with its default FALSE", () => {
    const done = decodeSyncDone(bytes(0x30, 0x05, 0x04, 0x03, ...ascii("ck1")));
    expect(Buffer.from(done.cookie as Uint8Array).toString()).toBe("ck1");
    expect(done.refreshDeletes).toBe(false);
    expect(decodeSyncDone(bytes(0x30, 0x03, 0x01, 0x01, 0xff))).toEqual({ refreshDeletes: true });
    expect(decodeSyncDone(bytes(0x30, 0x00))).toEqual({ refreshDeletes: false });
    // An empty cookie is not an absent one: the caller tells them apart.
    expect(decodeSyncDone(bytes(0x30, 0x02, 0x04, 0x00)).cookie).toEqual(new Uint8Array());
  });
});

describe("syncInfoValue", () => {
  it("reads a new cookie, the end of either phase with refreshDone's default TRUE, and a syncIdSet", () => {
    const cookie = decodeSyncInfo(bytes(0x80, 0x02, ...ascii("xy")));
    expect(cookie.kind).toBe("newCookie");
    expect(Buffer.from((cookie as { cookie: Uint8Array }).cookie).toString()).toBe("xy");
    expect(decodeSyncInfo(bytes(0xa1, 0x03, 0x01, 0x01, 0x00))).toEqual({
      kind: "refreshDelete",
      refreshDone: false,
    });
    expect(decodeSyncInfo(bytes(0xa2, 0x00))).toEqual({
      kind: "refreshPresent",
      refreshDone: true,
    });
    const set = [0x31, 0x24, 0x04, 0x10, ...uuid1, 0x04, 0x10, ...uuid2];
    const deletes = decodeSyncInfo(
      bytes(0xa3, 0x2c, 0x04, 0x01, ...ascii("k"), 0x01, 0x01, 0xff, ...set),
    );
    expect(deletes).toMatchObject({
      kind: "syncIdSet",
      refreshDeletes: true,
      uuids: [text1, text2],
    });
    expect(decodeSyncInfo(bytes(0xa3, 0x26, ...set))).toEqual({
      kind: "syncIdSet",
      refreshDeletes: false,
      uuids: [text1, text2],
    });
  });

  it("refuses an unknown choice and a syncIdSet without its set", () => {
    expect(() => decodeSyncInfo(bytes(0xa4, 0x00))).toThrow(/unknown syncInfoValue/);
    expect(() => decodeSyncInfo(bytes(0xa3, 0x03, 0x01, 0x01, 0xff))).toThrow(/syncIdSet/);
  });
});

describe("syncRequestValue", () => {
  it("asks for refreshOnly, with the cookie when there is one, in short and long BER lengths", () => {
    expect([...encodeSyncRequest()]).toEqual([0x30, 0x03, 0x0a, 0x01, 0x01]);
    expect([...encodeSyncRequest(Buffer.from("ab"))]).toEqual([
      0x30, 0x07, 0x0a, 0x01, 0x01, 0x04, 0x02, 0x61, 0x62,
    ]);
    const long = encodeSyncRequest(Buffer.alloc(300, 0x63));
    expect([...long.subarray(0, 9)]).toEqual([
      0x30, 0x82, 0x01, 0x33, 0x0a, 0x01, 0x01, 0x04, 0x82,
    ]);
    expect([...long.subarray(9, 11)]).toEqual([0x01, 0x2c]);
    expect(long.length).toBe(4 + 3 + 4 + 300);
  });
});

describe("uuidString", () => {
  it("spells 16 bytes as RFC 4530's lowercase entryUUID", () => {
    expect(uuidString(Uint8Array.from(uuid2))).toBe(text2);
  });
});
