/**
 * `ik probe --engine-kind auto` against the real llama.cpp server in ../shared/engines/llama.cpp
 * (build 10587, tiny model): it must choose the llamacpp profile, and a wrong model must list the
 * served alias. Bun only (a real engine: CONTRACTS.md "Platform and CI"); skipped where the server
 * cannot run. Budget: about 2 s (startup ~0.2 s, two 8-token requests).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { runIk } from "../_helpers/ik.ts";
import { llamaSkip, type LlamaServer, startLlama } from "../_helpers/llama_server.ts";

const skip = llamaSkip();

describe("ik probe against a real llama-server", { skip }, () => {
  let server: LlamaServer;
  let url = "";
  before(async () => {
    server = await startLlama();
    url = server.url;
  });
  after(() => server?.stop());

  test("a bare probe chooses llamacpp from owned_by and gets exactly max_tokens", async () => {
    const r = await runIk([
      "probe",
      "--base-url",
      url,
      "--model",
      "tiny-llama",
      "--max-tokens",
      "8",
      "--json",
    ], {
      timeoutMs: 30_000,
    });
    assert.equal(r.code, 0, r.stderr);
    const row = JSON.parse(r.stdout);
    assert.deepEqual([row.engine_kind, row.engine_kind_source, row.engine_kind_detail], [
      "llamacpp",
      "owned_by",
      "owned_by=llamacpp",
    ]);
    assert.deepEqual(row.asked.exact_length, ["ignore_eos"]);
    assert.equal(row.n_tokens, 8);
  });

  test("a model it does not serve: exit 69, the line lists tiny-llama", async () => {
    const r = await runIk(["probe", "--base-url", url, "--model", "gpt-4o"], { timeoutMs: 30_000 });
    assert.equal(r.code, 69, r.stderr);
    assert.match(r.stderr, /^ik: --model: 'gpt-4o' is not served .*'tiny-llama'/);
  });
});

if (skip) test("real llama-server probe (skipped)", { skip }, () => {});
