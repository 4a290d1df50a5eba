/**
 * Token-exact synthetic prompts against the REAL llama-server (../shared/engines/llama.cpp, Llama-2
 * SentencePiece vocab, ChatML template) through the binary: `ik prompts synth --tokenize-via`
 * (/apply-template + /tokenize) then `ik bench serve` single mode: every request's
 * usage.prompt_tokens equals its target (0 error on chat) and the record says so. With
 * --prefix-len the cache tag lands after the shared prefix, so the server's prefix cache serves
 * the prefix (cached_tokens ≥ P) while the rest is prefilled cold; a tag at the start would not.
 * Bun only (a real engine), -t 1. Budget: ~8 s.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { saltedMessages } from "../../lib/bench/salt.ts";
import { parsePromptSetText } from "../../lib/prompts/mod.ts";
import { runIk } from "../_helpers/ik.ts";
import { llamaSkip, type LlamaServer, startLlama } from "../_helpers/llama_server.ts";

const skip = llamaSkip();

describe("prompts synth --tokenize-via against a real llama-server", { skip }, () => {
  let server: LlamaServer;
  let dir = "";
  let env: Record<string, string> = {};
  before(async () => {
    server = await startLlama();
    dir = await mkdtemp(join(tmpdir(), "ik-llama-synth-"));
    env = { IK_RUNS_DIR: join(dir, "runs"), IK_KEY_FILE: join(dir, "key") };
  });
  after(async () => {
    server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const synth = async (name: string, args: string[]) => {
    const out = join(dir, `${name}.jsonl`);
    const r = await runIk(["prompts", "synth", "--tokenize-via", server.url, ...args, "--out", out, "--json"], { env, timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).length_method, "server_tokenize:llamacpp");
    return out;
  };
  const serve = async (set: string, more: string[] = []) => {
    const r = await runIk(["bench", "serve", "--base-url", server.url, "--model", "tiny-llama", "--prompts", set, "--rounds", "2", "--warmup", "0", ...more, "--json"], { env, timeoutMs: 120_000 });
    assert.equal(r.code, 0, r.stderr);
    const rec = JSON.parse(r.stdout);
    const rows = (await readFile(join(env.IK_RUNS_DIR, rec.evidence_id, "requests.jsonl"), "utf8")).trim().split("\n").map((l) => JSON.parse(l));
    return { rec, rows };
  };

  test("--bucket in64:64:16: every untagged request's usage prompt_tokens is exactly 64; the record says 0 error", async () => {
    const set = await synth("in64", ["--bucket", "in64:64:16", "--per-bucket", "4"]);
    const { rec, rows } = await serve(set);
    const untagged = rows.filter((r) => r.salt === null);
    assert.equal(untagged.length, 4);
    for (const r of untagged) assert.equal(r.prompt_tokens, 64, `${r.id}: usage.prompt_tokens`);
    const pl = rec.data.prompt_lengths;
    assert.deepEqual(pl.length_methods, { "server_tokenize:llamacpp": 4 });
    assert.deepEqual([pl.buckets.in64.n, pl.buckets.in64.max_abs_error, pl.buckets.in64.mean_abs_error], [4, 0, 0]);
    assert.ok(!rec.limitations.some((l: string) => /approximate|differed/.test(l)), rec.limitations.join(" | "));
  });

  test("the issue's in512 bucket, chat and completions: 512 exactly; the words set is tens off and flagged", async () => {
    for (const api of ["chat", "completions"]) {
      const set = await synth(`in512-${api}`, ["--bucket", "in512:512:4", "--per-bucket", "2", "--api", api]);
      const { rec, rows } = await serve(set, ["--api", api]);
      for (const r of rows.filter((x) => x.salt === null)) assert.equal(r.prompt_tokens, 512, `${api} ${r.id}`);
      assert.equal(rec.data.prompt_lengths.buckets.in512.max_abs_error, 0, api);
    }
    const words = join(dir, "words.jsonl");
    assert.equal((await runIk(["prompts", "synth", "--bucket", "in512:512:4", "--per-bucket", "2", "--out", words], { env })).code, 0);
    const { rec } = await serve(words);
    assert.ok(rec.data.prompt_lengths.buckets.in512.mean_abs_error >= 20, `words: ${JSON.stringify(rec.data.prompt_lengths.buckets.in512)}`);
    assert.ok(rec.limitations.some((l: string) => /approximate/.test(l)) && rec.limitations.some((l: string) => /differed/.test(l)), rec.limitations.join(" | "));
  });

  test("--prefix-len 24 --range-ratio 0.25: exact per prompt; the tag after the prefix keeps it cached, the rest cold", async () => {
    const set = await synth("pre", ["--bucket", "p:96:4", "--per-bucket", "4", "--prefix-len", "24", "--range-ratio", "0.25", "--seed", "5"]);
    const ps = parsePromptSetText(await readFile(set, "utf8"), "pre.jsonl");
    assert.ok(new Set(ps.map((p) => p.extra.input_tokens)).size > 1, "lengths vary");
    const { rec, rows } = await serve(set);
    for (const r of rows.filter((x) => x.salt === null)) {
      assert.equal(r.prompt_tokens, ps.find((p) => p.id === r.id)!.extra.input_tokens, r.id);
    }
    assert.equal(rec.data.prompt_lengths.all.max_abs_error, 0);
    // The prefix cache, asked directly: the same prompt again, tagged with a tag never sent before.
    const p = ps[0];
    const send = async (messages: unknown) => {
      const res = await fetch(`${server.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "tiny-llama", messages, max_tokens: 1 }),
        signal: AbortSignal.timeout(10_000),
      });
      const j = await res.json();
      return { prompt: j.usage.prompt_tokens as number, cached: j.usage.prompt_tokens_details?.cached_tokens as number };
    };
    const at = p.extra.cache_salt_at as number;
    const prefixOnly = await send([{ role: "user", content: String(p.messages[0].content).slice(0, at).trimEnd() }]);
    const empty = await send([{ role: "user", content: "" }]);
    assert.equal(prefixOnly.prompt - empty.prompt, 24, "the prefix adds exactly 24 tokens to the chat request");
    await send(p.messages);
    const after = await send(saltedMessages(p.messages as never, `ik-t${Date.now()}`, p.extra.cache_salt_at as number));
    assert.ok(after.cached >= 24, `tag after the prefix: ${after.cached} cached tokens`);
    assert.ok(after.cached < after.prompt - 5, `the rest is prefilled cold: ${after.cached} of ${after.prompt} cached`);
    await send(p.messages);
    const start = await send(saltedMessages(p.messages as never, `ik-u${Date.now()}`));
    assert.ok(start.cached < 24, `tag at the start: only the template head is cached (${start.cached})`);
  });
});

if (skip) test("real llama-server synth --tokenize-via (skipped)", { skip }, () => {});
