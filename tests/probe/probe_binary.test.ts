/**
 * `ik probe` through the compiled binary (ikBin(): IK_BIN, default dist/ik): every engine
 * transcript replayed over loopback gives expected.json's values in the --json row, and the exit
 * codes hold (0 ok, 1 failed request, 69 unreachable, 64 usage, 65 malformed prompt set).
 */
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { ikBin, runIk } from "../_helpers/ik.ts";
import { closedPort } from "../client/_raw_server.ts";
import { apiOf, expectedAll, replayServer, transcriptNames } from "../client/_replay.ts";
import { startMock } from "../mock/_helpers.ts";

const expected = expectedAll();

describe("ik probe (compiled binary)", () => {
  let server: Awaited<ReturnType<typeof replayServer>>;
  let dir: string;
  before(async () => {
    assert.ok(existsSync(ikBin()), `${ikBin()} is missing: build it with scripts/build.sh (or set IK_BIN)`);
    server = await replayServer();
    dir = mkdtempSync(join(tmpdir(), "ik-probe-"));
  });
  after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const probe = (name: string, extra: string[] = []) =>
    runIk([
      "probe",
      "--base-url",
      server.url(name),
      "--model",
      "m",
      "--api",
      apiOf(name),
      "--idle-timeout-s",
      "5",
      "--timeout-s",
      "20",
      ...extra,
    ], { timeoutMs: 30_000 });

  test("every transcript: --json row matches expected.json, exit 0 or 1", async () => {
    const names = transcriptNames();
    const runs = await Promise.all(names.map((n) => probe(n, ["--json"])));
    names.forEach((name, i) => {
      const run = runs[i];
      const want = expected[name];
      assert.equal(run.code, want.ok ? 0 : 1, `${name}: exit ${run.code}; stderr ${run.stderr}`);
      const lines = run.stdout.trim().split("\n");
      assert.equal(lines.length, 1, `${name}: exactly one JSON object on stdout`);
      const row = JSON.parse(lines[0]);
      const got: Record<string, unknown> = { ok: row.ok, ended_with_done: row.ended_with_done };
      for (const k of ["n_tokens", "token_count_method", "n_token_events", "error_kind"]) {
        if (k in want) got[k] = row[k];
      }
      assert.deepEqual(got, want, `${name}: ${row.error ?? ""}`);
      assert.equal(row.api, apiOf(name));
      assert.equal(row.id, "probe");
      assert.equal(typeof row.t_send_ns, "number");
      if (row.ok) assert.ok(row.ttft_ms >= 0 && row.e2e_ms >= row.ttft_ms, name);
    });
    assert.equal(server.requests.filter((r) => r.startsWith("POST ")).length, names.length);
  });

  test("human output: a table with the row's numbers", async () => {
    const run = await probe("vllm/chat-stream-return-token-ids.sse", ["--engine-kind", "vllm"]);
    assert.equal(run.code, 0, run.stderr);
    for (
      const want of [
        "TTFT",
        "TPOT",
        "end-to-end",
        "10 (ids)",
        "7 (first event 1 token(s), max 3 ids per event)",
        "stop",
        "return_token_ids (free)",
        "ignore_eos,min_tokens",
        "Hello! How can I help you today?",
      ]
    ) {
      assert.ok(run.stdout.includes(want), `missing '${want}' in:\n${run.stdout}`);
    }
    const failed = await probe("sglang/error-stream.sse");
    assert.equal(failed.code, 1);
    assert.match(failed.stdout, /FAILED \(protocol\)/);
    assert.match(failed.stdout, /Generation aborted/);
  });

  test("events of several tokens without ids: the first event's count is said to be assumed, and the TPOT read low", async () => {
    const mock = await startMock(["--engine", "sglang", "--ttft-ms", "5", "--tpot-ms", "2", "--tokens-per-event", "3"]);
    try {
      const run = await runIk(["probe", "--base-url", mock.base, "--model", "mock-model", "--max-tokens", "16"], { timeoutMs: 30_000 });
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /6 \(first event 1 token\(s\), assumed: no ids, max - ids per event\)/);
      assert.match(run.stdout, /16 tokens in 6 events: several tokens an event, so TPOT reads low/);
    } finally {
      await mock.stop();
    }
    // One token an event (ids streamed): nothing assumed, no warning.
    const ids = await probe("vllm/chat-stream-return-token-ids.sse", ["--engine-kind", "vllm"]);
    assert.doesNotMatch(ids.stdout, /assumed|TPOT reads low/);
  });

  test("unreachable server: exit 69, the row says network, one line on stderr", async () => {
    const run = await runIk([
      "probe",
      "--base-url",
      `http://127.0.0.1:${await closedPort()}/v1`,
      "--model",
      "m",
      "--json",
    ], { timeoutMs: 30_000 });
    assert.equal(run.code, 69, run.stderr);
    assert.equal(JSON.parse(run.stdout).error_kind, "network");
    assert.equal(run.stderr.trim().split("\n").length, 1);
    assert.match(run.stderr, /^ik: probe: server at http:\/\/127\.0\.0\.1:\d+ not reachable/);
  });

  test("usage errors exit 64 with one line naming the flag", async () => {
    const prompts = join(dir, "p.jsonl");
    writeFileSync(
      prompts,
      JSON.stringify({ id: "a", bucket: "short", messages: [{ role: "user", content: "hi" }] }) + "\n",
    );
    const base = ["probe", "--base-url", server.url("vllm/chat-stream.sse"), "--model", "m"];
    const cases: [string[], RegExp][] = [
      [["probe", "--base-url", "localhost:8000", "--model", "m"], /--base-url/],
      [["probe", "--base-url", "http://127.0.0.1:1/v1?x", "--model", "m"], /--base-url/],
      [[...base, "--prompt", "x", "--prompts", prompts, "--id", "a"], /--prompt and --prompts/],
      [[...base, "--prompts", prompts], /missing --id/],
      [[...base, "--id", "a"], /--id needs --prompts/],
      [[...base, "--prompts", prompts, "--id", "zzz"], /no prompt 'zzz'/],
      [[...base, "--extra-body", "{bad"], /--extra-body/],
      [[...base, "--extra-body", "[1]"], /must be a JSON object/],
      [[...base, "--api-key-env", "IK_TEST_SURELY_UNSET_VAR"], /IK_TEST_SURELY_UNSET_VAR is not set/],
      [[...base, "--engine-kind", "tgi"], /tgi|engine-kind/],
      [[...base, "--max-tokens", "0"], /max-tokens/],
      [["probe", "--model", "m"], /base-url/],
    ];
    for (const [args, re] of cases) {
      const run = await runIk(args, { timeoutMs: 30_000 });
      assert.equal(run.code, 64, `${args.join(" ")}: ${run.stderr}`);
      assert.equal(run.stderr.trim().split("\n").length, 1, run.stderr);
      assert.match(run.stderr, /^ik: /);
      assert.match(run.stderr, re);
    }
  });

  test("a prompt from a set, with the API key from the named env var; a malformed set exits 65", async () => {
    const good = join(dir, "set.jsonl");
    writeFileSync(
      good,
      JSON.stringify({
        id: "q1",
        bucket: "short",
        messages: [{ role: "user", content: "hi" }],
        max_tokens: 12,
      }) + "\n",
    );
    const run = await runIk([
      "probe",
      "--base-url",
      server.url("vllm/chat-stream.sse"),
      "--model",
      "m",
      "--prompts",
      good,
      "--id",
      "q1",
      "--api-key-env",
      "IK_PROBE_TEST_KEY",
      "--json",
    ], { env: { IK_PROBE_TEST_KEY: "sk-1" }, timeoutMs: 30_000 });
    assert.equal(run.code, 0, run.stderr);
    const row = JSON.parse(run.stdout);
    assert.equal(row.id, "q1");
    assert.equal(row.bucket, "short");
    assert.equal(row.max_tokens, 12);
    assert.equal(server.auths[server.auths.length - 1], "Bearer sk-1");
    const bad = join(dir, "bad.jsonl");
    writeFileSync(
      bad,
      JSON.stringify({ id: "q1", bucket: "short", messages: [{ role: "user", content: "hi" }] }) +
        "\n{oops\n",
    );
    const b = await runIk([
      "probe",
      "--base-url",
      server.url("vllm/chat-stream.sse"),
      "--model",
      "m",
      "--prompts",
      bad,
      "--id",
      "q1",
    ], { timeoutMs: 30_000 });
    assert.equal(b.code, 65, b.stderr);
    assert.match(b.stderr, /^ik: bad\.jsonl:2: not JSON/);
  });
});
