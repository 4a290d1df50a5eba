/**
 * The usage-mismatch fault (MOCK.md "Faults"): the usage block reports D more completion tokens
 * than were streamed (a negative D fewer, floored at 0), while the streamed tokens (and ids, where
 * the personality streams them) stay true; whole answers too. In-process, well under a second,
 * plus one `ik mock --help` per way of running ik (~1 s).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createMock, ENGINES, type Mock, parseFault } from "../../lib/mock/mod.ts";
import { ikVariants, runArgv } from "../_helpers/ik.ts";
import { chatBody, splitSse } from "./_helpers.ts";

type Json = Record<string, unknown>;
const MAX = 7;

function post(mock: Mock, body: Json): Promise<Response> {
  return mock.fetch(
    new Request("http://mock/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    }),
  );
}

/** completion_tokens of the last usage block found anywhere in the parsed objects. */
function lastUsage(objects: unknown[]): number | undefined {
  let found: number | undefined;
  for (const o of objects) {
    const u = (o as { usage?: { completion_tokens?: number } | null } | undefined)?.usage;
    if (u && typeof u.completion_tokens === "number") found = u.completion_tokens;
  }
  return found;
}

function streamedTokens(objects: unknown[]): { words: number; ids: number } {
  let words = 0;
  let ids = 0;
  for (const o of objects) {
    const c = (o as { choices?: Json[] } | undefined)?.choices?.[0] as
      | { delta?: { content?: string | null }; token_ids?: number[] | null }
      | undefined;
    const text = c?.delta?.content;
    if (typeof text === "string") words += text.split(" ").filter(Boolean).length;
    if (Array.isArray(c?.token_ids)) ids += c.token_ids.length;
  }
  return { words, ids };
}

describe("--fault usage-mismatch[:D]", () => {
  for (const engine of ENGINES) {
    it(`${engine}: usage says D more than streamed; streamed tokens and ids stay true`, async () => {
      const mock = createMock({
        engine,
        ttftMs: 0,
        tpotMs: 0,
        faults: [parseFault("usage-mismatch:3@2"), parseFault("usage-mismatch")],
      });
      try {
        const body = chatBody(`usage ${engine}`, {
          max_tokens: MAX,
          stream_options: { include_usage: true },
          ...(engine === "vllm" ? { return_token_ids: true } : {}),
        });
        // Request 1: only the plain fault (+1); request 2: both (+1 +3).
        for (const extra of [1, 4]) {
          const events = splitSse(await (await post(mock, body)).text()).map((e) => e.json);
          const streamed = streamedTokens(events);
          assert.equal(streamed.words, MAX, "every token still streamed");
          if (engine === "vllm") assert.equal(streamed.ids, MAX, "ids stay true");
          assert.equal(lastUsage(events), MAX + extra, `${engine} streamed usage`);
        }
        const whole = await (await post(mock, { ...body, stream: false })).json() as Json;
        const msg = (whole.choices as { message?: { content?: string } }[])[0].message?.content ?? "";
        assert.equal(msg.split(" ").filter(Boolean).length, MAX, "whole: every token in the text");
        assert.equal(lastUsage([whole]), MAX + 1, `${engine} whole usage (request 3: the plain fault)`);
      } finally {
        mock.close();
      }
    });
  }

  for (const engine of ENGINES) {
    it(`${engine}: a negative D lies low, floored at 0; streamed tokens and ids stay true`, async () => {
      // Request 1: -2 (MAX - 2); request 2: -2 and -1000 (floored at 0); request 3 (whole): -2.
      const mock = createMock({
        engine,
        ttftMs: 0,
        tpotMs: 0,
        faults: [parseFault("usage-mismatch:-2"), parseFault("usage-mismatch:-1000@2")],
      });
      try {
        const body = chatBody(`low ${engine}`, {
          max_tokens: MAX,
          stream_options: { include_usage: true },
          ...(engine === "vllm" ? { return_token_ids: true } : {}),
        });
        for (const usage of [MAX - 2, 0]) {
          const events = splitSse(await (await post(mock, body)).text()).map((e) => e.json);
          const streamed = streamedTokens(events);
          assert.equal(streamed.words, MAX, "every token still streamed");
          if (engine === "vllm") assert.equal(streamed.ids, MAX, "ids stay true");
          assert.equal(lastUsage(events), usage, `${engine} streamed usage`);
        }
        const whole = await (await post(mock, { ...body, stream: false })).json() as Json;
        const msg = (whole.choices as { message?: { content?: string } }[])[0].message?.content ?? "";
        assert.equal(msg.split(" ").filter(Boolean).length, MAX, "whole: every token in the text");
        assert.equal(lastUsage([whole]), MAX - 2, `${engine} whole usage (request 3: -2 only)`);
      } finally {
        mock.close();
      }
    });
  }

  it("without the fault, usage equals the tokens streamed", async () => {
    const mock = createMock({ engine: "vllm", ttftMs: 0, tpotMs: 0 });
    try {
      const body = chatBody("honest", { max_tokens: MAX, stream_options: { include_usage: true } });
      const events = splitSse(await (await post(mock, body)).text()).map((e) => e.json);
      assert.equal(lastUsage(events), MAX);
    } finally {
      mock.close();
    }
  });

  it("ik mock --help says a negative D lies low, floored at 0", async () => {
    for (const v of ikVariants()) {
      const r = await runArgv(v.argv, ["mock", "--help"], { timeoutMs: 30_000 });
      assert.equal(r.code, 0, `${v.name}: ${r.stderr}`);
      const help = (r.stdout + r.stderr).replace(/\s+/g, " ");
      assert.match(
        help,
        /usage-mismatch\[:D\] \(usage reports D more tokens than streamed, default 1; a negative D lies low, floored at 0\)/,
        v.name,
      );
    }
  });
});
