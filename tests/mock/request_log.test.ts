/**
 * `--request-log` (MOCK.md "Flags" and "The mock's own clock"): one exact line per finished
 * request, aborted, faulted and refused ones included; first_ms/last_ms are the real write times
 * (not the planned ones) and agree with what a client on loopback sees. In-process, about 2 s.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MAX_MOCK_BODY_BYTES } from "../../lib/cli/limits.ts";
import { createMock, type Mock, type MockOptions, parseFault } from "../../lib/mock/mod.ts";
import { admit, Run } from "../../lib/mock/generation.ts";
import { MockState } from "../../lib/mock/state.ts";
import { resolveMockOptions } from "../../lib/mock/options.ts";
import { runtime } from "../../lib/runtime/mod.ts";
import { chatBody, median, rawRequest, splitSse } from "./_helpers.ts";

const LINE =
  /^ik-request serial=(\d+) prompt=(\d+) cached=0 gen=(\d+) acc=(\d+) prop=(\d+) first_ms=(-|\d+\.\d{3}) last_ms=(-|\d+\.\d{3}) recv_wall_ms=(\d+\.\d{3})$/;

interface Logged {
  serial: number;
  prompt: number;
  gen: number;
  first: number | null;
  last: number | null;
  wall: number;
}

function parse(line: string): Logged {
  const m = line.match(LINE);
  assert.ok(m, `not a request-log line: ${line}`);
  const ms = (s: string) => (s === "-" ? null : Number(s));
  return { serial: +m[1], prompt: +m[2], gen: +m[3], first: ms(m[6]), last: ms(m[7]), wall: +m[8] };
}

function logged(opts: Partial<MockOptions>): { mock: Mock; lines: string[] } {
  const lines: string[] = [];
  return { mock: createMock({ ...opts, requestLog: true }, { requestLog: (l) => lines.push(l) }), lines };
}

function post(mock: Mock, body: unknown, raw?: string): Promise<Response> {
  return mock.fetch(
    new Request("http://mock/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: raw ?? JSON.stringify(body),
    }),
  );
}

describe("--request-log", () => {
  it("stamps first_ms/last_ms when the writer says the chunk was written, not when the event was due", async () => {
    const lines: string[] = [];
    const state = new MockState(resolveMockOptions({ ttftMs: 0, tpotMs: 0, requestLog: true }), {
      requestLog: (l) => lines.push(l),
    });
    try {
      const intake = await admit(
        state,
        "chat",
        new Request("http://mock/v1/chat/completions", {
          method: "POST",
          body: JSON.stringify(chatBody("stamp", { max_tokens: 2 })),
        }),
      );
      assert.ok("generation" in intake);
      const run = new Run(intake.generation);
      assert.ok(await run.next()); // due at 0 ms
      await new Promise((r) => setTimeout(r, 60)); // e.g. a slow chunk to format
      run.wrote();
      assert.ok(await run.next());
      await new Promise((r) => setTimeout(r, 60));
      run.wrote();
      run.end("complete");
      const l = parse(lines[0]);
      assert.ok(l.first! >= 55 && l.last! >= l.first! + 55, lines[0]);
    } finally {
      state.close();
    }
  });

  it("first_ms/last_ms are when the chunk was really written: a reader that holds back delays the writes", async () => {
    const { mock, lines } = logged({ ttftMs: 0, tpotMs: 0 });
    try {
      const res = await post(mock, chatBody("slow reader", { max_tokens: 3 }));
      const reader = res.body!.getReader();
      await reader.read(); // the role chunk
      await new Promise((r) => setTimeout(r, 200));
      while (!(await reader.read()).done) { /* drain */ }
      const l = parse(lines[0]);
      assert.equal(l.gen, 3);
      // All three were due at 0 ms; the stream only takes the next chunk once the last was read.
      assert.ok(l.first !== null && l.first < 100, `first_ms=${l.first}`);
      assert.ok(l.last !== null && l.last >= 180, `last_ms=${l.last}: the real write, not the plan (0 ms)`);
    } finally {
      mock.close();
    }
  });

  it("agrees with the client's view over loopback: first_ms ≈ client TTFT, last_ms ≈ client last token", async () => {
    const { mock, lines } = logged({ ttftMs: 40, tpotMs: 10 });
    const served = await runtime.serve(mock.fetch, { hostname: "127.0.0.1", port: 0 });
    try {
      const firstLag: number[] = [];
      const lastLag: number[] = [];
      for (let i = 0; i < 3; i++) {
        const wall0 = performance.timeOrigin + performance.now();
        const x = await rawRequest(
          served.port,
          "POST",
          "/v1/chat/completions",
          chatBody(`loop ${i}`, { max_tokens: 5 }),
        );
        const tokens = splitSse(x.body, x.bodyPieces).filter((e) =>
          typeof (e.json as { choices?: { delta?: { content?: string } }[] })?.choices?.[0]?.delta
              ?.content ===
            "string" &&
          (e.json as { choices: { delta: { content: string } }[] }).choices[0].delta.content !== ""
        );
        assert.equal(tokens.length, 5);
        const l = parse(lines[i]);
        assert.equal(l.serial, i + 1);
        assert.ok(l.first! >= 40 && l.last! >= 80, `first_ms=${l.first} last_ms=${l.last}`);
        assert.ok(Math.abs(l.wall - wall0) < 50, `recv_wall_ms ${l.wall} vs sent ${wall0}`);
        firstLag.push(tokens[0].atMs - l.first!);
        lastLag.push(tokens[4].atMs - l.last!);
      }
      // The client's clock starts when it wrote the request, the mock's when it had read it: the
      // difference is loopback transport (and this busy machine), never negative beyond noise.
      for (const lag of [median(firstLag), median(lastLag)]) {
        assert.ok(lag > -1 && lag < 15, `client − mock = ${lag.toFixed(3)} ms`);
      }
    } finally {
      mock.close();
      await served.close();
    }
  });

  it("every finished request gets one line: complete, reset, HTTP-error fault, client gone, bad JSON, 413", async () => {
    const { mock, lines } = logged({
      ttftMs: 30,
      tpotMs: 5,
      faults: [parseFault("http500@5"), parseFault("reset@3")],
    });
    try {
      await (await post(mock, chatBody("one", { max_tokens: 4 }))).text(); // 1 complete
      const gone = await post(mock, chatBody("two", { max_tokens: 4 })); // 2 leaves before a token
      await gone.body!.cancel();
      await (await post(mock, chatBody("three", { max_tokens: 4 }))).text().catch(() => ""); // 3 reset
      await (await post(mock, undefined, "{not json")).text(); // 4 bad JSON
      await (await post(mock, chatBody("five", { max_tokens: 4 }))).text(); // 5 http500
      const big = new Uint8Array(1024 * 1024);
      let sent = 0;
      const r413 = await mock.fetch(
        new Request("http://mock/v1/chat/completions", {
          method: "POST",
          body: new ReadableStream<Uint8Array>({
            pull(c) {
              if (sent > MAX_MOCK_BODY_BYTES + 8 * big.byteLength) return c.close();
              sent += big.byteLength;
              c.enqueue(big);
            },
          }),
          duplex: "half",
        } as RequestInit),
      ); // 6 too large
      assert.equal(r413.status, 413);
      await r413.body?.cancel();
      await new Promise((r) => setTimeout(r, 50));
      const got = lines.map(parse);
      assert.deepEqual(got.map((l) => l.serial), [1, 2, 3, 4, 5, 6], lines.join("\n"));
      const [done, left, reset, badJson, err500, tooBig] = got;
      assert.equal(done.gen, 4);
      assert.ok(done.first! >= 30 && done.last! >= 45, lines[0]);
      assert.deepEqual([err500.gen, err500.first, err500.last], [0, null, null]);
      // The fault answers the request it read: its prompt is counted as any other's.
      assert.equal(err500.prompt, 1 + 4 + 3);
      assert.equal(reset.gen, 1);
      assert.ok(reset.first! >= 30 && reset.last === reset.first, lines[2]);
      assert.deepEqual([left.gen, left.first, left.last, left.prompt], [0, null, null, 1 + 4 + 3]);
      assert.deepEqual([badJson.gen, badJson.first, tooBig.gen, tooBig.first], [0, null, 0, null]);
    } finally {
      mock.close();
    }
  });
});
