import { HttpResponse, http } from "msw";
import { describe, expect, it, vi } from "vitest";
import {
  createVersionClient,
  isConfigurationError,
  isHttpError,
  isResponseShapeError,
  ResponseShapeError,
  Timestamp,
} from "../../../src/clients/version/index.ts";
import { useMswServer } from "../integration-api/msw-server.ts";

const baseUrl = "https://integration.test";
const server = useMswServer();
const documented = {
  version: "100",
  release_sequence: 51,
  release_notes: "The release notes",
  release_date: "2015-12-01T00:00:00.0000000Z",
  install_date: "2016-01-01T21:00:00.0000000Z",
};

function answer(path: string, body: string, init: ResponseInit = {}) {
  server.use(http.get(`${baseUrl}${path}`, () => new HttpResponse(body, init)));
}

const client = () => createVersionClient({ api: "integration", baseUrl, retry: { limit: 0 } });

describe("current()", () => {
  it("reads the documented record, with lossless timestamps and the version as a string", async () => {
    answer("/version/v1/current", JSON.stringify(documented));
    const current = await client().current();
    expect(current).toEqual({
      version: "100",
      releaseSequence: 51,
      releaseNotes: "The release notes",
      releaseDate: Timestamp.parse("2015-12-01T00:00:00.0000000Z"),
      installDate: Timestamp.parse("2016-01-01T21:00:00.0000000Z"),
    });
    expect(current.releaseDate.text).toBe("2015-12-01T00:00:00.0000000Z");
    expect(current.installDate.compare(current.releaseDate)).toBeGreaterThan(0);
  });

  it("keeps undocumented fields under their wire names, __proto__ as plain data", async () => {
    answer(
      "/version/v1/current",
      JSON.stringify(documented).replace("{", '{"channel":"stable","__proto__":{"polluted":true},'),
    );
    const current = await client().current();
    expect(current.extra).toEqual(JSON.parse('{"channel":"stable","__proto__":{"polluted":true}}'));
    expect(Object.getPrototypeOf(current.extra)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("fails with a ResponseShapeError carrying the raw body when a field is missing or malformed", async () => {
    const body = JSON.stringify({ ...documented, release_sequence: "51", install_date: undefined });
    answer("/version/v1/current", body, { headers: { "content-type": "application/json" } });
    const error = await client()
      .current()
      .catch((caught: unknown) => caught);
    expect(isResponseShapeError(error)).toBe(true);
    expect(error).toBeInstanceOf(ResponseShapeError);
    expect(error).toMatchObject({
      status: 200,
      body,
      method: "GET",
      url: `${baseUrl}/version/v1/current`,
    });
    expect((error as Error).message).toContain("missing install_date; malformed release_sequence");
  });

  it("fails with a ResponseShapeError when the body is not JSON", async () => {
    answer("/version/v1/current", "<html>login</html>");
    await expect(client().current()).rejects.toMatchObject({
      name: "ResponseShapeError",
      body: "<html>login</html>",
    });
  });
});

describe("updates()", () => {
  const update = {
    version: "101",
    release_sequence: 52,
    release_notes: "Faster",
    release_date: "2016-02-01T00:00:00.0000000Z",
  };
  const expected = {
    version: "101",
    releaseSequence: 52,
    releaseNotes: "Faster",
    releaseDate: Timestamp.parse("2016-02-01T00:00:00.0000000Z"),
  };

  it.each([
    ["a bare array", JSON.stringify([update])],
    ["an object with an updates array", JSON.stringify({ updates: [update], total: 1 })],
    ["an object whose only array is the list", JSON.stringify({ releases: [update], total: 1 })],
    ["an items array beside other arrays", JSON.stringify({ items: [update], warnings: [] })],
  ])("accepts %s", async (_, body) => {
    answer("/version/v1/updates", body);
    expect(await client().updates()).toEqual([expected]);
  });

  it.each([
    ["an empty body", ""],
    ["null", "null"],
    ["an empty object", "{}"],
    ["an empty array", "[]"],
  ])("reads %s as no updates", async (_, body) => {
    answer("/version/v1/updates", body);
    expect(await client().updates()).toEqual([]);
  });

  it("types known fields when well-formed and keeps everything else in extra", async () => {
    answer(
      "/version/v1/updates",
      JSON.stringify([{ version: 102, release_sequence: 53, size_mb: 120, release_date: "soon" }]),
    );
    expect(await client().updates()).toEqual([
      { releaseSequence: 53, extra: { version: 102, size_mb: 120, release_date: "soon" } },
    ]);
  });

  it("fails with a ResponseShapeError when there is no list", async () => {
    answer("/version/v1/updates", JSON.stringify({ a: [], b: [] }));
    await expect(client().updates()).rejects.toSatisfy(isResponseShapeError);
    answer("/version/v1/updates", '"none"');
    await expect(client().updates()).rejects.toSatisfy(isResponseShapeError);
  });

  it("sets aside the items that cannot be applied, with their raw JSON, and types the rest for apply()", async () => {
    const items = [
      update,
      1,
      { version: "103" },
      { release_sequence: "54" },
      { release_sequence: 55 },
    ];
    answer("/version/v1/updates", JSON.stringify(items));
    const pending = await client().updates();
    expect(pending).toEqual([expected, { releaseSequence: 55 }]);
    expect(pending.invalid).toEqual([
      { index: 1, problem: "not a JSON object", raw: 1 },
      { index: 2, problem: "no release_sequence", raw: { version: "103" } },
      { index: 3, problem: "release_sequence is not an integer", raw: { release_sequence: "54" } },
    ]);
    expect(JSON.stringify(pending)).not.toContain("invalid");
    // The type says what the value holds: a number that apply() takes, no undefined to check.
    const sequences: number[] = pending.map((item) => item.releaseSequence);
    expect(sequences).toEqual([52, 55]);
  });
});

describe("apply()", () => {
  function recordPuts(respond: () => Response) {
    const paths: string[] = [];
    server.use(
      http.put(`${baseUrl}/version/v1/:sequence`, ({ request }) => {
        paths.push(new URL(request.url).pathname);
        return respond();
      }),
    );
    return paths;
  }

  it.each([200, 202, 204])(
    "PUTs /version/v1/:sequence and returns a %i with its body",
    async (status) => {
      const body = status === 204 ? "" : '{"state":"installing"}';
      const paths = recordPuts(() => new HttpResponse(body || null, { status }));
      expect(await client().apply(52)).toEqual({ status, body });
      expect(paths).toEqual(["/version/v1/52"]);
    },
  );

  it("takes an update as updates() returned it, and applies its sequence", async () => {
    server.use(
      http.get(`${baseUrl}/version/v1/updates`, () =>
        HttpResponse.json([{ version: "1.1.0", release_sequence: 53 }]),
      ),
    );
    const paths = recordPuts(() => new HttpResponse(null, { status: 204 }));
    const version = client();
    const [update] = await version.updates();
    expect(await version.apply(update as NonNullable<typeof update>)).toEqual({
      status: 204,
      body: "",
    });
    expect(paths).toEqual(["/version/v1/53"]);
  });

  it("refuses an update without a sequence, before any request", async () => {
    const paths = recordPuts(() => new HttpResponse(null, { status: 204 }));
    const sdkUpdate = { version: "2.0.0", releaseNotes: "" };
    await expect(client().apply(sdkUpdate)).rejects.toThrow(
      /apply\(\) takes the release sequence of a pending update, a positive integer; got undefined/,
    );
    expect(paths).toEqual([]);
  });

  it("checks the sequence locally, before any request", async () => {
    const paths = recordPuts(() => new HttpResponse(null, { status: 204 }));
    for (const sequence of [0, -1, 1.5, Number.NaN, 2 ** 53, "52", undefined]) {
      await expect(client().apply(sequence as number), String(sequence)).rejects.toThrow(
        /apply\(\) takes the release sequence of a pending update, a positive integer/,
      );
    }
    expect(paths).toEqual([]);
  });

  it("is never retried, even on a 503", async () => {
    const paths = recordPuts(() => new HttpResponse("busy", { status: 503 }));
    const error = await createVersionClient({
      api: "integration",
      baseUrl,
      retry: { limit: 5, baseDelayMs: 1 },
    })
      .apply(52)
      .catch((caught: unknown) => caught);
    expect(isHttpError(error)).toBe(true);
    expect(error).toMatchObject({ status: 503, body: "busy", method: "PUT" });
    expect(paths).toHaveLength(1);
  });
});

describe("watchUpdates()", () => {
  /** Serves the given bodies in turn, the last one repeating. */
  function serveUpdates(...bodies: string[]) {
    let polls = 0;
    server.use(
      http.get(
        `${baseUrl}/version/v1/updates`,
        () => new HttpResponse(bodies[Math.min(polls++, bodies.length - 1)]),
      ),
    );
    return () => polls;
  }

  it("yields the list at once, then only when it changes, and ends on abort", async () => {
    const polls = serveUpdates(
      "[]",
      "[]",
      '[{"release_sequence":101}]',
      '[{"release_sequence":101}]',
      '{"updates":[{"release_sequence":101}]}',
      '[{"release_sequence":102}]',
    );
    const controller = new AbortController();
    const seen: unknown[] = [];
    for await (const updates of client().watchUpdates({
      intervalMs: 1,
      signal: controller.signal,
    })) {
      seen.push(updates);
      if (seen.length === 3) controller.abort();
    }
    expect(seen).toEqual([[], [{ releaseSequence: 101 }], [{ releaseSequence: 102 }]]);
    expect(polls()).toBe(6);
  });

  it("ends at once when the signal is already aborted", async () => {
    const polls = serveUpdates("[]");
    const iterator = client().watchUpdates({ signal: AbortSignal.abort() });
    expect(await iterator.next()).toEqual({ done: true, value: undefined });
    expect(polls()).toBe(0);
  });

  it("surfaces a failed poll by throwing", async () => {
    server.use(
      http.get(`${baseUrl}/version/v1/updates`, () => new HttpResponse(null, { status: 500 })),
    );
    const iterator = client().watchUpdates({ intervalMs: 1 });
    await expect(iterator.next()).rejects.toSatisfy(isHttpError);
  });

  it("with onError, reports a configuration error once and ends, since polling cannot fix it", async () => {
    vi.stubEnv("PLATFORM_INTEGRATIONAPI", undefined);
    const errors: unknown[] = [];
    const seen: unknown[] = [];
    for await (const updates of createVersionClient({ api: "integration" }).watchUpdates({
      intervalMs: 1,
      onError: (error) => errors.push(error),
    })) {
      seen.push(updates);
    }
    expect(seen).toEqual([]);
    expect(errors).toHaveLength(1);
    expect(isConfigurationError(errors[0])).toBe(true);
  });

  it("with onError, reports a failed poll and goes on watching", async () => {
    let polls = 0;
    server.use(
      http.get(`${baseUrl}/version/v1/updates`, () =>
        polls++ === 0
          ? new HttpResponse(null, { status: 500 })
          : HttpResponse.json([{ version: "101", release_sequence: 2 }]),
      ),
    );
    const errors: unknown[] = [];
    const iterator = client().watchUpdates({
      intervalMs: 1,
      onError: (error) => errors.push(error),
    });
    expect((await iterator.next()).value).toEqual([{ version: "101", releaseSequence: 2 }]);
    expect(errors).toHaveLength(1);
    expect(isHttpError(errors[0])).toBe(true);
    await iterator.return?.();
  });
});
