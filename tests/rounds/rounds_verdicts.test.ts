/**
 * Issue 18 through dist/ik, with `ik mock` processes as engines:
 * - one single-mode round of five engines (Bun only, ~6 s): a manifest `model.id` the engine does
 *   not serve is `model_missing` naming what it serves; an engine that exits mid-measurement is
 *   `engine_exited`; failures over `--slo-max-fail` are `too_many_failures`; an `expect` hard-gate
 *   violation is `hard_gate` (shown, never ranked); a "vllm-mtp" entry launched as `vllm serve`
 *   is kind vllm; the run exits 1; a hard-gate violation alone exits 1 too (~2 s);
 * - two identical engines for two rounds (Bun only, ~3 s): no engine is marked best, exit 0;
 * - a load round whose engines reach different N* (Bun only, ~8 s): the N* at the top of the
 *   grid is `≥ 4`, and every value at N* says the N* differ;
 * - a bad `--extra-body` (flag, `--serve-args` or manifest) refused before any engine launches
 *   (both runtimes, ~2 s).
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { freePorts } from "../_helpers/ports.ts";
import { ikBin, runIk } from "../_helpers/ik.ts";
import { runtime } from "../../lib/runtime/mod.ts";

const BUN = runtime.name === "bun";
let dir: string;
let env: Record<string, string>;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), "ik-rounds-verdicts-"));
  env = { IK_RUNS_DIR: join(dir, "runs"), IK_KEY_FILE: join(dir, "key") };
  const words = ["Hello there", "Tell me a story about a lighthouse", "What is two plus two", "Name a colour", "Describe the sea", "Count to five"];
  await writeFile(join(dir, "six.jsonl"), words.map((w, i) => JSON.stringify({ id: `p${i}`, bucket: "short", messages: [{ role: "user", content: w }], max_tokens: 16 })).join("\n") + "\n");
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

const readJson = async (p: string) => JSON.parse(await readFile(p, "utf8"));

describe("bench rounds verdicts (issue 18)", { skip: BUN ? false : "Bun only (heavy end-to-end; CONTRACTS.md CI time)" }, () => {
  test("model_missing, engine_exited, too_many_failures, hard_gate and a kind from the launch argv in one round; exit 1 (~6 s)", async () => {
    const ik = ikBin();
    const marker = `verdicts-${process.pid}`;
    const ports = await freePorts(5);
    // A `vllm` on PATH that is the mock: `vllm serve MODEL --port P`.
    const shim = join(dir, "vllm");
    await writeFile(shim, `#!/bin/sh\nexec "${ik}" mock --engine vllm --model "$2" --port "$4" --tpot-ms 2\n`);
    await chmod(shim, 0o755);
    const m = (port: number, ...extra: string[]) => [ik, "mock", "--engine", "vllm", "--port", String(port), "--model", marker, ...(extra.includes("--tpot-ms") ? [] : ["--tpot-ms", "2"]), ...extra];
    const manifest = {
      model: { id: marker },
      engines: [
        { label: "mtp", name: "vllm-mtp", launch: [shim, "serve", marker, "--port", String(ports[0])], port: ports[0] },
        { label: "othermodel", name: "vllm", launch: [ik, "mock", "--engine", "vllm", "--port", String(ports[1]), "--model", "some-other-model"], port: ports[1] },
        // Six requests of ~0.55 s each, from ~0.6 s after the start; the engine exits with status 1 after 2.5 s.
        { label: "dies", name: "vllm", launch: m(ports[2], "--tpot-ms", "30", "--exit-after-s", "2.5"), port: ports[2] },
        { label: "flaky", name: "vllm", launch: m(ports[3], "--fault", "http500@3"), port: ports[3] },
        { label: "gated", name: "vllm", launch: m(ports[4], "--startup-log", "vllm"), port: ports[4], expect: { max_num_seqs: 128 } },
      ],
    };
    await writeFile(join(dir, "five.json"), JSON.stringify(manifest));
    const run = join(dir, "five");
    const r = await runIk(["bench", "rounds", join(dir, "five.json"), "--prompts", join(dir, "six.jsonl"), "--rounds", "1", "--warmup", "0",
      "--serve-args", "--max-tokens 16 --warmup 0 --slo-max-fail 1", "--run-dir", run, "--gpu-lock", join(dir, "lock5"), "--stop-timeout-s", "2", "--poll-s", "0.1"],
      { env, timeoutMs: 110_000 });
    assert.equal(r.code, 1, r.stderr.slice(-3000));
    const cell = (l: string) => readJson(join(run, "rounds", `${l}.r1.json`));
    const plan = await readJson(join(run, "rounds", "plan.json"));
    const kinds = Object.fromEntries(plan.engines.map((e: { label: string; kind: string; kind_source: string }) => [e.label, [e.kind, e.kind_source]]));
    assert.deepEqual(kinds.mtp, ["vllm", "launch"]);
    const mtp = await cell("mtp");
    assert.equal(mtp.status, "ok", mtp.detail);
    assert.equal(mtp.kind, "vllm");
    assert.equal(mtp.serve.argv[mtp.serve.argv.indexOf("--engine-kind") + 1], "vllm");
    // The round's value is the nearest-rank median of its 6 requests: the 3rd smallest, an observed value.
    const reqs = (await readFile(join(env.IK_RUNS_DIR, mtp.serve.evidence_id, "requests.jsonl"), "utf8")).trim().split("\n").map((l) => JSON.parse(l));
    for (const name of ["ttft_ms", "e2e_ms"]) {
      const xs = reqs.filter((q) => q.ok).map((q) => q[name] as number).sort((a, b) => a - b);
      assert.equal(xs.length, 6);
      assert.equal(mtp.metrics.all[name].value, xs[2], `${name}: ${xs}`);
    }
    const om = await cell("othermodel");
    assert.equal(om.status, "model_missing");
    assert.match(om.detail, new RegExp(`model\\.id "${marker}" is not served; the engine serves "some-other-model"`));
    assert.equal(om.serve, undefined, "nothing was measured against the wrong model");
    const dies = await cell("dies");
    assert.equal(dies.status, "engine_exited", dies.detail);
    assert.match(dies.detail, /exited with code 1 during the measurement, before ik stopped it; \d of 6 requests failed/);
    const flaky = await cell("flaky");
    assert.equal(flaky.status, "too_many_failures", flaky.detail);
    assert.equal(flaky.detail, "2 of 6 requests failed, more than --slo-max-fail 1");
    const gated = await cell("gated");
    assert.equal(gated.status, "hard_gate");
    assert.match(gated.detail, /^\[HARD GATE\] max_num_seqs: expected 128, resolved 256/);
    const summary = await readJson(join(run, "rounds", "summary.json"));
    const rows = summary.summary.rows.filter((x: { metric: string; bucket: string }) => x.metric === "decode_tok_s" && x.bucket === "all");
    assert.deepEqual(rows.map((x: { engine: string }) => x.engine).sort(), ["gated", "mtp"], "only ok and hard-gate cells are summarized");
    const g = rows.find((x: { engine: string }) => x.engine === "gated");
    assert.equal(g.verdict, "never ranked: [HARD GATE]");
    assert.equal(g.ratio_to_best, null);
    assert.equal(g.best, null);
    const md = await readFile(join(run, "rounds", "summary.md"), "utf8");
    for (const s of ["model_missing", "engine_exited", "too_many_failures", "hard_gate"]) assert.match(md, new RegExp(`\\| 1 \\| \\w+ \\| ${s} \\|`), s);
    assert.doesNotMatch(r.stdout, /gated \*/);
  });

  test("a hard-gate violation alone: the faster, violating engine is never ranked and the run exits 1 (~2 s)", async () => {
    const ik = ikBin();
    const [p1, p2] = await freePorts(2);
    const eng = (port: number, tpot: string, ...extra: string[]) => [ik, "mock", "--engine", "vllm", "--port", String(port), "--tpot-ms", tpot, ...extra];
    await writeFile(join(dir, "gate.json"), JSON.stringify({ engines: [
      { label: "fastgated", name: "vllm", launch: eng(p1, "1", "--startup-log", "vllm"), port: p1, expect: { max_num_seqs: 64 } },
      { label: "plain", name: "vllm", launch: eng(p2, "4"), port: p2 },
    ] }));
    const r = await runIk(["bench", "rounds", join(dir, "gate.json"), "--prompts", join(dir, "six.jsonl"), "--rounds", "1", "--warmup", "0",
      "--serve-args", "--max-tokens 8 --warmup 0 --limit-per-bucket 2", "--run-dir", join(dir, "gate"), "--gpu-lock", join(dir, "lockG"), "--poll-s", "0.1"],
      { env, timeoutMs: 60_000 });
    assert.equal(r.code, 1, r.stderr.slice(-3000));
    assert.match(r.stdout, /^fastgated ! +decode_tok_s .*never ranked: \[HARD GATE\]$/m);
    assert.match(r.stdout, /^plain = +decode_tok_s /m);
    assert.match(r.stdout, /2 cells, 1 not ok/);
  });

  test("two identical engines over two rounds: no engine is marked best (too few rounds / no clear difference); exit 0 (~3 s)", async () => {
    const ik = ikBin();
    const [p1, p2] = await freePorts(2);
    const eng = (port: number) => [ik, "mock", "--engine", "vllm", "--port", String(port), "--tpot-ms", "3"];
    await writeFile(join(dir, "same.json"), JSON.stringify({ engines: [{ label: "a", name: "vllm", launch: eng(p1), port: p1 }, { label: "b", name: "vllm", launch: eng(p2), port: p2 }] }));
    const r = await runIk(["bench", "rounds", join(dir, "same.json"), "--prompts", join(dir, "six.jsonl"), "--rounds", "2", "--warmup", "0",
      "--serve-args", "--max-tokens 8 --warmup 0 --limit-per-bucket 2", "--run-dir", join(dir, "same"), "--gpu-lock", join(dir, "lockS"), "--poll-s", "0.1"],
      { env, timeoutMs: 90_000 });
    assert.equal(r.code, 0, r.stderr.slice(-3000));
    const lines = r.stdout.split("\n").filter((l) => /^[ab] /.test(l));
    assert.ok(lines.length >= 8, r.stdout);
    for (const l of lines) assert.doesNotMatch(l, /^[ab] \*/, `no best on noise: ${l}`);
    assert.match(r.stdout, /^[ab] = +decode_tok_s .*too few rounds vs [ab]$/m);
    const summary = await readJson(join(dir, "same", "rounds", "summary.json"));
    for (const row of summary.summary.rows) assert.equal(row.best, null, `${row.engine} ${row.metric}`);
  });

  test("load mode: an N* at the top of the grid reads ≥ 4, and values at different N* say so (~8 s)", async () => {
    const ik = ikBin();
    const [p1, p2] = await freePorts(2);
    // big: 8 slots (≈ 250 req/s); small: 1 slot of 16 x 2 ms (≈ 31 req/s). Levels 1 and 4 at --ref-e2e-ms 100: 10 and 40 req/s.
    const eng = (port: number, batch: number) => [ik, "mock", "--engine", "vllm", "--port", String(port), "--max-batch", String(batch), "--step-ms", "2"];
    await writeFile(join(dir, "nstar.json"), JSON.stringify({ engines: [{ label: "big", name: "vllm", launch: eng(p1, 8), port: p1 }, { label: "small", name: "vllm", launch: eng(p2, 1), port: p2 }] }));
    const run = join(dir, "nstar");
    const r = await runIk(["bench", "rounds", join(dir, "nstar.json"), "--mode", "load", "--prompts", join(dir, "six.jsonl"), "--rounds", "1", "--warmup", "0", "--ref-e2e-ms", "100",
      "--serve-args", "--concurrency 1,4 --duration-s 1.5 --slo-ttft-p95-ms 150 --max-tokens 16 --warmup 0", "--run-dir", run, "--gpu-lock", join(dir, "lockN")],
      { env, timeoutMs: 90_000 });
    assert.equal(r.code, 0, r.stderr.slice(-3000));
    assert.match(r.stdout, /^big =? *n_star +≥ 4 /m);
    assert.match(r.stdout, /^small +n_star +1 /m);
    assert.match(r.stdout, /^small +goodput_rps_at_n_star .*at different N\*: small 1, big ≥ 4/m);
    const big = await readJson(join(run, "rounds", "big.r1.json"));
    assert.equal(big.metrics.all.n_star.lower_bound, true);
    assert.match(await readFile(join(run, "rounds", "summary.md"), "utf8"), /\| big[^|]*\| all \| n_star \| ≥ 4 streams \|/);
  });
});

test("a bad --extra-body is refused before any engine launches: 64 for the flag and --serve-args, 65 for the manifest (~2 s)", async () => {
  const launched = join(dir, "launched");
  const manifest = (extra?: unknown) => JSON.stringify({ ...(extra ? { workload: { extra_body: extra } } : {}), engines: [{ label: "x", name: "vllm", launch: ["sh", "-c", `touch ${launched}`], port: 1 }] });
  await writeFile(join(dir, "eb.json"), manifest());
  const flag = await runIk(["bench", "rounds", join(dir, "eb.json"), "--extra-body", '{"stream":false}', "--run-dir", join(dir, "eb"), "--gpu-lock", join(dir, "lockX")], { env, timeoutMs: 30_000 });
  assert.equal(flag.code, 64, flag.stderr);
  assert.equal(flag.stderr.trim().split("\n").length, 1, flag.stderr);
  assert.match(flag.stderr, /^ik: --extra-body: key 'stream' must stay true/);
  const inner = await runIk(["bench", "rounds", join(dir, "eb.json"), "--serve-args", `--extra-body '{"a":{"__proto__":{"x":1}}}'`, "--run-dir", join(dir, "eb"), "--gpu-lock", join(dir, "lockX")], { env, timeoutMs: 30_000 });
  assert.equal(inner.code, 64, inner.stderr);
  assert.match(inner.stderr, /--serve-args: --extra-body: key 'a\.__proto__' is not allowed/);
  await writeFile(join(dir, "eb2.json"), manifest({ stream: false }));
  const man = await runIk(["bench", "rounds", join(dir, "eb2.json"), "--run-dir", join(dir, "eb"), "--gpu-lock", join(dir, "lockX")], { env, timeoutMs: 30_000 });
  assert.equal(man.code, 65, man.stderr);
  assert.match(man.stderr, /eb2\.json: workload\.extra_body: key 'stream' must stay true/);
  assert.equal(existsSync(launched), false, "no engine was launched");
  assert.equal(existsSync(join(dir, "eb", "rounds")), false, "nothing ran");
});

test("a secret-looking engine label with live metrics in --serve-args is refused before any engine launches (64, the label never printed)", async () => {
  const launched = join(dir, "launched-live");
  const label = "sk-proj-Abcdefghijklmnop0123456789";
  await writeFile(join(dir, "live.json"), JSON.stringify({ engines: [
    { label: "fine", name: "vllm", launch: ["sh", "-c", `touch ${launched}`], port: 1 },
    { label, name: "vllm", launch: ["sh", "-c", `touch ${launched}`], port: 2 },
  ] }));
  const r = await runIk(["bench", "rounds", join(dir, "live.json"), "--serve-args", "--metrics-listen=127.0.0.1:0", "--run-dir", join(dir, "live"), "--gpu-lock", join(dir, "lockL")], { env, timeoutMs: 30_000 });
  assert.equal(r.code, 64, r.stderr);
  assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
  assert.match(r.stderr, /^ik: --serve-args: turns on live metrics \(--metrics-listen\).*the label of engines\[1\] in the manifest: value looks like an API key or token/);
  assert.ok(!r.stderr.includes("Abcdefghijklmnop"), r.stderr);
  assert.equal(existsSync(launched), false, "no engine was launched");
  assert.equal(existsSync(join(dir, "live", "rounds")), false, "nothing ran");
  // Without live metrics the label is only a name: the run goes on (to the engine, which fails here).
  const plain = await runIk(["bench", "rounds", join(dir, "live.json"), "--engines", "fine", "--serve-args", "--metrics-listen=127.0.0.1:0", "--run-dir", join(dir, "live2"), "--gpu-lock", join(dir, "lockL"), "--startup-timeout-s", "1"], { env, timeoutMs: 60_000 });
  assert.notEqual(plain.code, 64, plain.stderr);
});

