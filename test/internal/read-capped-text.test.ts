// The one home of the answer-size cap: cappedBytes (the arithmetic, which the Node client of a
// Provisioning API feeds from a Node stream) and readCappedText (the same over a web stream, for
// the Integration API layer and the platform's fetch exchanges).
import { describe, expect, it } from "vitest";
import { cappedBytes, readCappedText } from "../../src/internal/read-capped-text.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

describe("cappedBytes", () => {
  it("keeps chunks up to the cap exactly, and is complete at the cap", () => {
    const capped = cappedBytes(6);
    expect(capped.push(bytes("abc"))).toBe(true);
    expect(capped.push(bytes("def"))).toBe(true);
    expect(capped.text()).toEqual({ body: "abcdef", complete: true });
  });

  // Catches an off-by-one that keeps a byte past the cap, or drops the chunk that crosses it.
  it("keeps the start of the chunk that crosses the cap, then refuses more", () => {
    const capped = cappedBytes(5);
    expect(capped.push(bytes("abc"))).toBe(true);
    expect(capped.push(bytes("defg"))).toBe(false);
    expect(capped.push(bytes("h"))).toBe(false);
    expect(capped.text()).toEqual({ body: "abcde", complete: false });
  });

  it("decodes UTF-8 across chunks, and a character cut at the cap as U+FFFD", () => {
    const zoe = bytes("Zoë");
    const whole = cappedBytes(10);
    whole.push(zoe.subarray(0, 3));
    whole.push(zoe.subarray(3));
    expect(whole.text().body).toBe("Zoë");
    const cut = cappedBytes(3);
    cut.push(zoe);
    expect(cut.text()).toEqual({ body: "Zo\uFFFD", complete: false });
  });

  it("refuse marks the body cut off without keeping any of it", () => {
    const capped = cappedBytes(5);
    capped.refuse();
    expect(capped.text()).toEqual({ body: "", complete: false });
  });
});

describe("readCappedText", () => {
  const signal = new AbortController().signal;

  it("reads a body within the cap whole, and an empty one as empty", async () => {
    expect(await readCappedText(new Response("hello"), 5, signal)).toEqual({
      body: "hello",
      complete: true,
    });
    expect(await readCappedText(new Response(null, { status: 204 }), 5, signal)).toEqual({
      body: "",
      complete: true,
    });
  });

  it("stops pulling an endless stream at the cap and cancels it", async () => {
    let pulled = 0;
    let cancelled = false;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(bytes("xxxx"));
      },
      cancel() {
        cancelled = true;
      },
    });
    const read = await readCappedText(new Response(endless), 10, signal);
    expect(read).toEqual({ body: "x".repeat(10), complete: false });
    expect(cancelled).toBe(true);
    expect(pulled).toBeLessThanOrEqual(4);
  });

  it("reads nothing of a body whose declared length is over the cap", async () => {
    const response = new Response("0123456789", { headers: { "content-length": "10" } });
    expect(await readCappedText(response, 9, signal)).toEqual({ body: "", complete: false });
  });

  it("rejects with the signal's reason when it aborts mid-body", async () => {
    const controller = new AbortController();
    const trickle = new ReadableStream<Uint8Array>({
      pull: () => new Promise(() => undefined),
    });
    const reading = readCappedText(new Response(trickle), 10, controller.signal);
    controller.abort(new Error("attempt timed out"));
    await expect(reading).rejects.toThrow("attempt timed out");
  });
});
