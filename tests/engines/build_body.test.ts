/** Engine profiles and buildBody, as seed 002 profiles.py specifies them. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { buildBody, ENGINE_KINDS, profileForPersonality, PROFILES } from "../../lib/engines/mod.ts";
import { temperatureOf } from "../../lib/commands/bench_serve_setup.ts";
import { IkError } from "../../lib/cli/errors.ts";

const msgs = [{ role: "system", content: "Be brief." }, { role: "user", content: "Hi" }];

test("common fields: greedy, streamed, usage asked, messages or joined prompt", () => {
  for (const kind of ENGINE_KINDS) {
    const chat = buildBody("chat", kind, "m", msgs, 64).body;
    assert.equal(chat.model, "m");
    assert.deepEqual(chat.messages, msgs);
    assert.equal(chat.prompt, undefined);
    assert.equal(chat.max_tokens, 64);
    assert.equal(chat.temperature, 0);
    assert.equal(chat.stream, true);
    assert.deepEqual(chat.stream_options, { include_usage: true });
    const comp = buildBody("completions", kind, "m", msgs, 8).body;
    assert.equal(comp.prompt, "Be brief.\n\nHi");
    assert.equal(comp.messages, undefined);
  }
});

test("exact length per engine (min_tokens = max_tokens where the engine has it)", () => {
  const want: Record<string, Record<string, unknown> | null> = {
    vllm: { ignore_eos: true, min_tokens: 32 },
    sglang: { ignore_eos: true, min_tokens: 32 },
    llamacpp: { ignore_eos: true },
    trtllm: { ignore_eos: true, min_tokens: 32 },
    generic: null,
  };
  for (const kind of ENGINE_KINDS) {
    const { body, asked } = buildBody("chat", kind, "m", msgs, 32);
    const w = want[kind];
    if (w === null) {
      assert.equal(asked.exact_length, null, kind);
      assert.equal(body.ignore_eos, undefined, kind);
    } else {
      for (const [k, v] of Object.entries(w)) assert.equal(body[k], v, `${kind}.${k}`);
      assert.deepEqual(asked.exact_length, Object.keys(w).sort(), kind);
    }
    assert.equal(
      buildBody("chat", kind, "m", msgs, 32, { exactLength: false }).body.ignore_eos,
      undefined,
      `${kind} without exact length`,
    );
  }
});

test("token ids: auto asks only where free, logprobs falls back to logprobs, off never", () => {
  const v = buildBody("chat", "vllm", "m", msgs, 8);
  assert.equal(v.body.return_token_ids, true);
  assert.deepEqual(v.asked.token_ids, { via: "free", fields: ["return_token_ids"] });
  const vl = buildBody("completions", "vllm", "m", msgs, 8, { tokenIds: "logprobs" });
  assert.equal(vl.body.return_token_ids, true, "free ids exist, so logprobs are not needed");
  assert.equal(vl.body.logprobs, undefined);
  assert.equal(buildBody("chat", "vllm", "m", msgs, 8, { tokenIds: "off" }).body.return_token_ids, undefined);
  assert.equal(buildBody("chat", "vllm", "m", msgs, 8, { tokenIds: "off" }).asked.token_ids, null);

  const l = buildBody("chat", "llamacpp", "m", msgs, 8);
  assert.equal(l.body.logprobs, undefined, "llama.cpp logprobs cost decode time: not asked in auto");
  assert.equal(l.asked.token_ids, null);
  const ll = buildBody("chat", "llamacpp", "m", msgs, 8, { tokenIds: "logprobs" });
  assert.equal(ll.body.logprobs, true);
  assert.equal(ll.body.top_logprobs, 1);
  assert.deepEqual(ll.asked.token_ids, { via: "logprobs", fields: ["logprobs", "top_logprobs"] });
  assert.equal(buildBody("completions", "llamacpp", "m", msgs, 8, { tokenIds: "logprobs" }).body.logprobs, 1);

  for (const kind of ["sglang", "trtllm", "generic"] as const) {
    for (const mode of ["auto", "logprobs"] as const) {
      const b = buildBody("chat", kind, "m", msgs, 8, { tokenIds: mode });
      assert.equal(b.asked.token_ids, null, `${kind} ${mode}`);
      assert.equal(
        b.body.return_token_ids,
        undefined,
        `${kind} must not get vendor fields (trtllm answers 400)`,
      );
    }
  }
});

test("the user's extra body is merged last and overrides anything", () => {
  const { body } = buildBody("chat", "vllm", "m", msgs, 8, {
    extra: { temperature: 0.7, min_tokens: 1, top_p: 0.9, stream_options: { include_usage: false } },
  });
  assert.equal(body.temperature, 0.7);
  assert.equal(body.min_tokens, 1);
  assert.equal(body.top_p, 0.9);
  assert.deepEqual(body.stream_options, { include_usage: false });
});

test("bodies do not share objects with the profile table or the caller", () => {
  const a = buildBody("chat", "vllm", "m", msgs, 8, { tokenIds: "off" }).body;
  (a.messages as { content: string }[])[0].content = "changed";
  assert.equal(msgs[0].content, "Be brief.");
  const b1 = buildBody("completions", "vllm", "m", msgs, 8).body;
  const b2 = buildBody("completions", "vllm", "m", msgs, 8).body;
  assert.notEqual(b1.stream_options, b2.stream_options, "nested objects are fresh per body");
  (b1.stream_options as Record<string, unknown>).include_usage = false;
  assert.deepEqual(b2.stream_options, { include_usage: true });
});

test("bad max_tokens is a programmer error", () => {
  for (const n of [0, -1, 1.5, Number.NaN]) {
    assert.throws(() => buildBody("chat", "vllm", "m", msgs, n), RangeError);
  }
});

test("mock personality openai is reached with the generic profile; others map to themselves", () => {
  assert.equal(profileForPersonality("openai"), "generic");
  for (const k of ["vllm", "sglang", "llamacpp", "trtllm", "generic"]) {
    assert.equal(profileForPersonality(k), k);
  }
  assert.throws(() => profileForPersonality("tgi"), RangeError);
  for (const k of ENGINE_KINDS) assert.ok(PROFILES[k].note.length > 10, `${k} has a note`);
});

test("temperature: 0 by default, the number asked for, or none at all (the server's default)", () => {
  const msgs = [{ role: "user" as const, content: "hi" }];
  assert.equal(buildBody("chat", "vllm", "m", msgs, 4).body.temperature, 0);
  assert.equal(buildBody("chat", "vllm", "m", msgs, 4, { temperature: 0.6 }).body.temperature, 0.6);
  const none = buildBody("completions", "sglang", "m", msgs, 4, { temperature: null }).body;
  assert.ok(!("temperature" in none), JSON.stringify(none));
  // --extra-body still wins
  assert.equal(buildBody("chat", "vllm", "m", msgs, 4, { temperature: null, extra: { temperature: 1 } }).body.temperature, 1);
});

test("--temperature T|server parses a number >= 0 or server; anything else is a usage error naming the flag", () => {
  assert.equal(temperatureOf("0"), 0);
  assert.equal(temperatureOf("0.7"), 0.7);
  assert.equal(temperatureOf(" Server "), null);
  for (const bad of ["", "-1", "hot", "NaN", "Infinity"]) {
    assert.throws(() => temperatureOf(bad), (e: unknown) => e instanceof IkError && e.code === 64 && e.where === "--temperature", bad);
  }
});
