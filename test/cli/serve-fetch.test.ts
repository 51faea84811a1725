import { afterEach, describe, expect, it } from "vitest";
import { type ServedFetch, serveFetch } from "../../src/cli/serve-fetch.ts";
import { defaultBodyLimit } from "../../src/provisioning/http/body-limit.ts";

let served: ServedFetch | undefined;
afterEach(async () => {
  await served?.close();
  served = undefined;
});

const serve = async (
  handler: (request: Request) => Promise<Response>,
  options: { bodyLimit?: number; onError?: (error: unknown) => void } = {},
) => {
  served = await serveFetch(handler, { host: "127.0.0.1", port: 0, ...options });
  return served.baseUrl;
};

describe("serveFetch", () => {
  it("hands the handler a Web Request and writes its Response back", async () => {
    const seen: unknown[] = [];
    const baseUrl = await serve(async (request) => {
      seen.push([request.method, request.url, request.headers.get("x-test"), await request.text()]);
      return new Response("created", { status: 201, headers: { "x-answer": "yes" } });
    });
    expect(baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const response = await fetch(`${baseUrl}/a/b?c=d`, {
      method: "POST",
      headers: { "x-test": "1" },
      body: "hello",
    });
    expect(response.status).toBe(201);
    expect(response.headers.get("x-answer")).toBe("yes");
    expect(response.headers.get("content-length")).toBe("7");
    expect(await response.text()).toBe("created");
    expect(seen).toEqual([["POST", `${baseUrl}/a/b?c=d`, "1", "hello"]]);
  });

  it("drops the connection for Response.error(), a network error", async () => {
    const baseUrl = await serve(async () => Response.error());
    await expect(fetch(baseUrl)).rejects.toThrow(TypeError);
  });

  it("answers 500 with a JSON error when the handler throws, and reports the error", async () => {
    const errors: unknown[] = [];
    const failure = new Error("boom");
    const baseUrl = await serve(
      async () => {
        throw failure;
      },
      { onError: (error) => errors.push(error) },
    );
    const response = await fetch(baseUrl);
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({
      error: "internal_error",
      message: "The server failed to answer this request.",
    });
    expect(errors).toEqual([failure]);
  });

  it("answers 413 for a body over the limit, declared or streamed", async () => {
    let calls = 0;
    const baseUrl = await serve(
      async () => {
        calls += 1;
        return new Response(null, { status: 204 });
      },
      { bodyLimit: 8 },
    );
    const declared = await fetch(baseUrl, { method: "POST", body: "0123456789" });
    expect(declared.status).toBe(413);
    expect(declared.headers.get("connection")).toBe("close");
    expect(await declared.json()).toMatchObject({ error: "payload_too_large" });
    const streamed = await fetch(baseUrl, {
      method: "POST",
      body: new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode("01234"));
          controller.enqueue(new TextEncoder().encode("56789"));
          controller.close();
        },
      }),
      duplex: "half",
    } as RequestInit);
    expect(streamed.status).toBe(413);
    expect((await fetch(baseUrl, { method: "POST", body: "01234567" })).status).toBe(204);
    expect(calls).toBe(1);
  });

  it("holds bodies to the Provisioning API's default limit when given none", async () => {
    const baseUrl = await serve(async (request) => {
      await request.arrayBuffer();
      return new Response(null, { status: 204 });
    });
    const post = (size: number) =>
      fetch(baseUrl, { method: "POST", body: new Uint8Array(size) }).then(
        (answer) => answer.status,
      );
    expect(await post(defaultBodyLimit)).toBe(204);
    expect(await post(defaultBodyLimit + 1)).toBe(413);
  });
});
