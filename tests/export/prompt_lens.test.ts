/**
 * `input_lens` of a vLLM export for requests the server gave no prompt count (failed ones): vLLM
 * writes every request's prompt_len, so ik writes the best length its level holds (the prompt
 * set's target, the identical prompt's count, the same prompt under another cache salt as an
 * estimate) and says so in `ik_input_lens`; a length nothing tells is 0 with the note saying it is
 * unknown, never a silent 0. total_input_tokens (successful requests only) does not change.
 * In-process, < 1 s.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { promptLens, promptLensNote } from "../../lib/export/prompt_lens.ts";
import { vllmLevelResult } from "../../lib/export/vllm_level_file.ts";

type Obj = Record<string, unknown>;
const ok = (id: string, n: number, salt: string | null = null): Obj => ({ id, ok: true, salt, prompt_tokens: n });
const bad = (id: string, salt: string | null = null, extra: Obj = {}): Obj => ({ id, ok: false, salt, prompt_tokens: null, ...extra });

describe("promptLens", () => {
  test("the server's count, else the declared target, for every row", () => {
    const p = promptLens([ok("a", 10), bad("b", null, { target_prompt_tokens: 12 }), { id: "c", ok: true, prompt_tokens: null, target_prompt_tokens: 7 }]);
    assert.deepEqual(p, { lens: [10, 12, 7], from: ["server", "target", "target"] });
  });

  test("a failed request without a count takes the identical prompt's count (same id, same salt)", () => {
    const p = promptLens([bad("a"), ok("a", 30, "s1"), ok("a", 16), ok("a", 16)]);
    assert.deepEqual(p, { lens: [16, 30, 16, 16], from: ["same_prompt", "server", "server", "server"] });
  });

  test("else the same prompt under another salt, salted from salted: an estimate", () => {
    const p = promptLens([ok("p1", 16), ok("p1", 17, "s-1"), ok("p1", 18, "s-10"), ok("p1", 18, "s-11"), bad("p1", "s-12"), bad("p4"), ok("p4", 17, "s-2")]);
    assert.deepEqual(p.lens, [16, 17, 18, 18, 18, 17, 17]);
    assert.deepEqual(p.from.slice(4, 6), ["other_salt", "other_salt"]);
  });

  test("nothing known: 0, and unknown (a prompt counted nowhere, a row without an id, a successful row without usage)", () => {
    const p = promptLens([bad("z"), { ok: false, prompt_tokens: null }, { id: "a", ok: true, prompt_tokens: null }, ok("b", 5)]);
    assert.deepEqual(p, { lens: [0, 0, 0, 5], from: ["unknown", "unknown", "unknown", "server"] });
  });

  test("the note names each source with its indices, bounded; none when every length is the server's", () => {
    assert.equal(promptLensNote(promptLens([ok("a", 1), ok("b", 2)])), null);
    const note = promptLensNote(promptLens([ok("a", 16, "s"), bad("a"), bad("q"), bad("x", null, { target_prompt_tokens: 9 })]))!;
    assert.match(note, /^input_lens is the server's usage\.prompt_tokens except for 3 request\(s\)/);
    assert.match(note, /1 the prompt set's declared input_tokens .* \[requests 3\]/);
    assert.match(note, /1 an estimate: .* \[requests 1\]/);
    assert.match(note, /1 unknown .*written 0, not a length \[requests 2\]/);
    const many = promptLensNote(promptLens(Array.from({ length: 500 }, (_, i) => bad(`u${i}`))))!;
    assert.match(many, /500 unknown .*\[requests 0, 1, .*, 19, … 480 more\]/);
    assert.ok(many.length < 600, String(many.length));
  });
});

describe("the level file", () => {
  const meta = { evidenceId: "e", label: "l", model: "m", tokenizer: "m", createdUtc: "2026-12-07T08:00:00Z" } as unknown as Parameters<typeof vllmLevelResult>[0];
  const row = (r: Obj, i: number) => ({
    n_tokens: r.ok ? 4 : null, ttft_ms: r.ok ? 10 : null, e2e_ms: r.ok ? 40 : null, t_send_ns: 1e9 + i, send_lag_ms: 0, error: r.ok ? null : "HTTP 500", ...r,
  });
  const file = (rows: Obj[]) => {
    const lv = { entry: { summary: { window_s: 1 } }, rows: rows.map(row), outputs: rows.map(() => null) } as unknown as Parameters<typeof vllmLevelResult>[1];
    return vllmLevelResult(meta, lv) as Record<string, unknown>;
  };

  test("a --prompts run's failed request: its prompt's length, not 0, said in ik_input_lens; the totals unchanged", () => {
    // as the reviewer's record: p4 failed unsalted, counted salted later in the level
    const f = file([ok("p1", 16), bad("p4"), ok("p5", 16), ok("p4", 17, "ik-s0-r4-7"), bad("p5", "ik-s0-r4-8")]);
    assert.deepEqual(f.input_lens, [16, 17, 16, 17, 16]);
    assert.equal(f.total_input_tokens, 16 + 16 + 17, "successful requests only");
    assert.match(String(f.ik_input_lens), /2 an estimate: .*\[requests 1, 4\]/);
    assert.deepEqual(Object.keys(f).filter((k) => k.startsWith("ik_")).slice(-2), ["ik_duration", "ik_input_lens"]);
  });

  test("every length the server's: no ik_input_lens key", () => {
    const f = file([ok("p1", 16), ok("p2", 12)]);
    assert.equal(f.ik_input_lens, undefined);
    assert.deepEqual(f.input_lens, [16, 12]);
  });
});
