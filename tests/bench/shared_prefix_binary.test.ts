/**
 * Through dist/ik against `ik mock --prefix-cache-tokens` (loopback, ~3 s): a prompt set whose
 * prompts begin alike is measured partly from the server's prefix cache even in a "cold" run, and
 * both record kinds say so; the mock's own request log shows the cached tokens the note warns of.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { runIk } from "../_helpers/ik.ts";
import { type MockProc, startMock } from "../mock/_helpers.ts";

let dir = "";
let mock: MockProc;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), "ik-shared-prefix-"));
  mock = await startMock(["--ttft-ms", "2", "--tpot-ms", "1", "--prefix-cache-tokens", "100000", "--request-log"]);
});
after(async () => {
  await mock?.stop();
  await rm(dir, { recursive: true, force: true });
});

test("a set whose prompts share a long start: single and load records say the cache can serve it; the mock served it; the engine's stated version is recorded", async () => {
  const story = Array.from({ length: 60 }, (_, i) => `word${i}`).join(" ");
  const lines = ["Summarise it.", "Rewrite it as a play.", "Ask three questions."].map((task, i) =>
    JSON.stringify({ id: `p${i}`, bucket: "b", messages: [{ role: "user", content: `${story} ${task}` }], max_tokens: 4 })
  );
  await writeFile(join(dir, "shared.jsonl"), lines.join("\n") + "\n");
  const env = { IK_RUNS_DIR: join(dir, "runs") };
  const single = await runIk(["bench", "serve", "--base-url", mock.base, "--model", "mock-model", "--prompts", join(dir, "shared.jsonl"), "--rounds", "1", "--warmup", "0", "--json"], { env, timeoutMs: 30_000 });
  assert.equal(single.code, 0, single.stderr);
  const rec = JSON.parse(single.stdout);
  assert.ok(rec.limitations.some((l: string) => /^prefix cache: 3 of the 3 prompts begin like another prompt of the set for at least 64 characters/.test(l)), rec.limitations.join("\n"));
  // The mock cached the shared start: the second and third prompts were served partly from it.
  const cached = mock.proc.stdout().split("\n").filter((l) => l.startsWith("ik-request ")).map((l) => Number(/cached=(\d+)/.exec(l)![1]));
  assert.ok(cached.slice(1).every((c) => c >= 48), `cached ${cached}`);
  const load = await runIk(["bench", "serve", "--base-url", mock.base, "--model", "mock-model", "--prompts", join(dir, "shared.jsonl"), "--mode", "load", "--rates", "20", "--requests", "3", "--warmup", "0", "--json"], { env, timeoutMs: 30_000 });
  assert.equal(load.code, 0, load.stderr);
  const capacity = JSON.parse(load.stdout);
  const measured = JSON.parse(await readFile(join(dir, "runs", capacity.data.measurement, "evidence.json"), "utf8"));
  assert.ok(measured.limitations.some((l: string) => /^prefix cache: 3 of the 3 prompts begin like another/.test(l)), measured.limitations.join("\n"));
  // Load mode tags only a prompt's reuses: --no-cache-salt, a single-mode flag, is refused there.
  const salt = await runIk(["bench", "serve", "--base-url", mock.base, "--model", "mock-model", "--prompts", join(dir, "shared.jsonl"), "--mode", "load", "--rates", "20", "--requests", "3", "--no-cache-salt"], { env, timeoutMs: 30_000 });
  assert.equal(salt.code, 64, salt.stderr);
  assert.match(salt.stderr, /^ik: --no-cache-salt: applies to single mode only/);
  assert.equal(salt.stderr.trim().split("\n").length, 1);
  // The built-in set begins every prompt differently: no such line.
  const builtin = await runIk(["bench", "serve", "--base-url", mock.base, "--model", "mock-model", "--buckets", "medium,long", "--rounds", "1", "--warmup", "0", "--max-tokens", "4", "--json"], { env, timeoutMs: 30_000 });
  assert.equal(builtin.code, 0, builtin.stderr);
  const b = JSON.parse(builtin.stdout);
  assert.ok(!b.limitations.some((l: string) => /^prefix cache:/.test(l)));
  // The engine's version as the server states it (the mock's vLLM /version), unless given.
  assert.deepEqual([b.identity.engine.version, b.identity.engine.version_source], ["0.11.0", "/version"]);
  const given = await runIk(["bench", "serve", "--base-url", mock.base, "--model", "mock-model", "--buckets", "very_short", "--rounds", "1", "--warmup", "0", "--max-tokens", "4", "--engine-version", "0.11.0rc1", "--json"], { env, timeoutMs: 30_000 });
  assert.deepEqual([JSON.parse(given.stdout).identity.engine.version, JSON.parse(given.stdout).identity.engine.version_source], ["0.11.0rc1", "--engine-version"]);
});

test("--gpu-metrics-url must be http(s): ftp is refused (64) before any request", async () => {
  const r = await runIk(["bench", "serve", "--base-url", mock.base, "--model", "mock-model", "--rounds", "1", "--gpu-metrics-url", "ftp://x/metrics"], { env: { IK_RUNS_DIR: join(dir, "runs") }, timeoutMs: 30_000 });
  assert.equal(r.code, 64, r.stderr);
  assert.match(r.stderr, /^ik: --gpu-metrics-url: 'ftp:' is not http or https/m);
});
