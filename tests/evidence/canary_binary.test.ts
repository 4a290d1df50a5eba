/**
 * The secret canary through dist/ik (issue 18 §1): distinct values that all contain CANARY are
 * planted in every channel a user can put a secret in, against a server that echoes them back
 * (tests/_helpers/echo_server.ts: headers, streamed content, error bodies, /metrics), and then
 * every file under every output folder, the crash logs (TMPDIR is the test's folder), stdout and
 * stderr of every run are searched: zero hits.
 *
 * Channels: the API key (--api-key-env), --extra-body and --chat-template-kwargs secret keys, a
 * URL query and fragment, a secret flag given to ik (usage error), a points plan's client argv
 * (`--password X`, `--token X`, `--hf-token=X`, `--api-key=X`, `--x-token=X`), a rounds manifest
 * env value an engine prints, and the echoing server.
 * Commands: probe, bench serve single and load, a sharded slice and merge, report md/html, export
 * vllm/csv/jsonl, summarize vllm, bench points (with a load-trial client), load-trial prepare/run,
 * bench rounds, and a run that fails writing its record (crash log).
 * Bun only (end-to-end; CONTRACTS.md CI time): about 30 s.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { ikBin, type IkRun, runIk } from "../_helpers/ik.ts";
import { freePorts } from "../_helpers/ports.ts";
import { type EchoServer, startEchoServer } from "../_helpers/echo_server.ts";
import { runtime } from "../../lib/runtime/mod.ts";

const MARK = "CANARY7Qx";
/** One value per channel, all holding MARK: a hit names the channel that leaked. */
const C = {
  key: `sk-${MARK}-apikey-Zr93pLm`,
  body: `${MARK}-extrabody-Lm4vQ`,
  bodyNested: `${MARK}-extrabody-nested-Ty7`,
  ctk: `${MARK}-chattemplate-Pq81`,
  query: `${MARK}-query-Hs22x`,
  frag: `${MARK}-fragment-Wd55`,
  usage: `sk-${MARK}-usage-Bb10`,
  password: `${MARK}-password-Aa11`,
  token: `${MARK}-token-Cc33`,
  hfToken: `hf_${MARK}-hftoken-Dd44`,
  clientKey: `${MARK}-clientkey-Ee55`,
  xToken: `${MARK}-xtoken-Ff66`,
  env: `${MARK}-manifestenv-Gg77`,
  launchKey: `${MARK}-launchkey-Hh88`,
  roundsBody: `${MARK}-roundsbody-Jj99`,
};

const skip = runtime.name !== "bun"
  ? "the canary runs the binary end to end: Bun only (CONTRACTS.md CI time)"
  : !existsSync(ikBin())
  ? "no dist/ik: run npm run build first"
  : false;

let dir = "";
let echo: EchoServer;
const runs: { args: string[]; r: IkRun }[] = [];
const env = () => ({ IK_RUNS_DIR: join(dir, "runs"), IK_KEY_FILE: join(dir, "key"), SECKEY: C.key, TMPDIR: join(dir, "tmp") });

async function ik(args: string[], timeoutMs = 90_000): Promise<IkRun> {
  const r = await runIk(args, { env: env(), timeoutMs, cwd: dir });
  runs.push({ args, r });
  return r;
}

const extraBody = JSON.stringify({ api_key: C.body, metadata: { session_token: C.bodyNested }, top_k: 5 });
const ctk = JSON.stringify({ secret: C.ctk, enable_thinking: false });

/** Every file under `root` (bounded: the test's own folder). */
function filesUnder(root: string, out: string[] = [], depth = 0): string[] {
  if (depth > 20 || !existsSync(root)) return out;
  for (const n of readdirSync(root)) {
    const p = join(root, n);
    const st = statSync(p);
    if (st.isDirectory()) filesUnder(p, out, depth + 1);
    else if (st.isFile()) out.push(p);
  }
  return out;
}

/** Where MARK occurs: "file: …context…". */
function hits(name: string, text: string): string[] {
  const out: string[] = [];
  for (let i = text.indexOf(MARK); i >= 0 && out.length < 5; i = text.indexOf(MARK, i + 1)) {
    out.push(`${name}: …${text.slice(Math.max(0, i - 80), i + 40).replace(/\n/g, "⏎")}…`);
  }
  return out;
}

describe("secrets never reach a file, a terminal or a crash log (dist/ik)", { skip }, () => {
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "ik-canary-"));
    await mkdir(join(dir, "tmp"));
    await mkdir(join(dir, "reports"));
    echo = await startEchoServer("echo-model");
  });
  after(async () => {
    await echo?.close();
    await rm(dir, { recursive: true, force: true });
  });

  test("usage errors: a URL query and fragment, a secret flag's value", async () => {
    const u = await ik(["probe", "--base-url", `${echo.base}/v1?api_key=${C.query}#access_token=${C.frag}`, "--model", "echo-model", "--api-key-env", "SECKEY"]);
    assert.equal(u.code, 64, u.stderr);
    const f = await ik(["bench", "points", "--base", `${echo.base}/#access_token=${C.frag}`, "--model", "echo-model", "--plan", join(dir, "none.json"), "--out", join(dir, "p0")]);
    assert.notEqual(f.code, 0);
    const flag = await ik(["bench", "serve", "--base-url", echo.base, "--model", "echo-model", `--api-key=${C.usage}`]);
    assert.equal(flag.code, 64, flag.stderr);
    assert.match(flag.stderr, /api-key/, "the error names the flag");
  });

  test("probe against the echoing server", async () => {
    const r = await ik(["probe", "--base-url", echo.base, "--model", "echo-model", "--api-key-env", "SECKEY", "--engine-kind", "vllm", "--extra-body", extraBody]);
    assert.ok(r.code !== null, r.stderr);
    const j = await ik(["probe", "--base-url", echo.base, "--model", "echo-model", "--api-key-env", "SECKEY", "--engine-kind", "vllm", "--extra-body", extraBody, "--json"]);
    assert.ok(j.stdout.length > 0 || j.stderr.length > 0);
  });

  const serveArgs = () => [
    "bench", "serve", "--base-url", echo.base, "--model", "echo-model", "--api-key-env", "SECKEY", "--engine-kind", "vllm",
    "--extra-body", extraBody, "--chat-template-kwargs", ctk, "--max-tokens", "4", "--warmup", "0", "--run-dir", join(dir, "run"), "--json",
  ];
  const ids: string[] = [];

  test("bench serve single and load write their records", async () => {
    const s = await ik([...serveArgs(), "--rounds", "1", "--limit-per-bucket", "2", "--label", "single"]);
    assert.ok(s.code === 0 || s.code === 1 || s.code === 2, s.stderr.slice(-2000));
    const l = await ik([...serveArgs(), "--mode", "load", "--rates", "5", "--duration-s", "1", "--slo-ttft-p95-ms", "500", "--label", "load"]);
    assert.ok(l.code === 0 || l.code === 2, l.stderr.slice(-2000));
    for (const r of [s, l]) {
      try {
        const rec = JSON.parse(r.stdout);
        if (typeof rec.evidence_id === "string") ids.push(rec.evidence_id);
        if (typeof rec.data?.measurement === "string") ids.push(rec.data.measurement);
      } catch { /* counted below */ }
    }
    assert.ok(ids.length >= 2, `records: ${ids.join(", ")}; ${s.stdout.slice(0, 300)} ${l.stdout.slice(0, 300)}`);
    assert.ok(echo.completions() > 3, "the server was really asked");
    // The echo reached the load record (/metrics answered with it) and was scrubbed there.
    const loadIds = ids.filter((id) => id.startsWith("serve_benchmark") && readFileSync(join(dir, "runs", id, "evidence.json"), "utf8").includes('"mode": "load"'));
    assert.ok(loadIds.length > 0, ids.join(", "));
    const measured = JSON.parse(readFileSync(join(dir, "runs", loadIds[0], "evidence.json"), "utf8"));
    const notes = JSON.stringify([measured.limitations, measured.data.levels.map((l: { server?: unknown }) => l.server)]);
    assert.match(notes, /Bearer \*\*\*/, `the /metrics echo is in the record, scrubbed: ${notes.slice(0, 600)}`);
  });

  test("report md/html and export of every record", async () => {
    for (const id of ids) {
      const md = await ik(["report", id, "--out", join(dir, "reports", `${id}.md`)]);
      assert.equal(md.code, 0, md.stderr);
      const html = await ik(["report", id, "--html", join(dir, "reports", `${id}.html`)]);
      assert.equal(html.code, 0, html.stderr);
      await ik(["report", id]);
      for (const format of ["vllm", "csv", "jsonl"]) {
        const x = await ik(["export", id, "--format", format, "--out", join(dir, "export", `${id}-${format}`)]);
        assert.ok(x.code === 0 || x.code === 64 || x.code === 65, `${format}: ${x.stderr}`);
      }
    }
    const rr = await ik(["report", join(dir, "run"), "--out", join(dir, "reports", "run.md")]);
    assert.ok(rr.code !== null);
    // summarize vllm reads back what export --format vllm wrote.
    const withRuns = ids.map((id) => join(dir, "export", `${id}-vllm`)).filter((d) => existsSync(join(d, "runs.tsv")));
    assert.ok(withRuns.length > 0, "a vllm export with runs.tsv");
    for (const d of withRuns) {
      const sm = await ik(["summarize", "vllm", "--runs", join(d, "runs.tsv"), "--results", d, "--json-out", join(d, "summary.json")]);
      assert.ok(sm.code !== null && sm.code !== 70, sm.stderr);
    }
  });

  test("a sharded load slice and its merge", async () => {
    const startAt = Date.now() + 4000;
    const s = await ik([...serveArgs().filter((_, i, a) => a[i] !== "--run-dir" && a[i - 1] !== "--run-dir"), "--mode", "load", "--rates", "5", "--duration-s", "1",
      "--shard", "0/1", "--start-at", String(startAt), "--group", "canary-g", "--gpu-name", "NVIDIA H100 80GB HBM3", "--gpu-count", "1", "--label", "shard"]);
    assert.equal(s.code, 0, s.stderr.slice(-2000));
    const m = await ik(["merge", join(dir, "runs"), "--group", "canary-g", "--json"]);
    assert.equal(m.code, 0, m.stderr.slice(-2000));
    const merged = JSON.parse(m.stdout);
    for (const id of [merged.evidence_id, merged.data?.measurement]) if (typeof id === "string") await ik(["report", id, "--html", join(dir, "reports", `${id}.html`)]);
  });

  test("bench points: secret flags in client_argv; a load-trial client against the echo", async () => {
    const prep = await ik(["load-trial", "prepare", "--out", join(dir, "lt"), "--synth", "16:8", "--requests", "6", "--json"]);
    assert.equal(prep.code, 0, prep.stderr);
    const w = JSON.parse(prep.stdout).path as string;
    const plan = {
      schema: 1,
      points: [
        {
          id: "echoargs", workload: { file: w, rate_rps: 1, requests: 1 }, client_timeout_s: 20, drain_timeout_s: 5,
          client_argv: ["sh", "-c", 'echo "client got: $*" >&2; echo "client got: $*"', "sh", "--password", C.password, "--token", C.token,
            `--hf-token=${C.hfToken}`, `--api-key=${C.clientKey}`, `--x-token=${C.xToken}`, "--max-tokens", "4"],
        },
        {
          id: "trial", workload: { file: w, rate_rps: 20, requests: 6 }, client_timeout_s: 60, drain_timeout_s: 5,
          client_argv: ["{ik}", "load-trial", "run", "--base", "{base}", "--expected-model", "{model}", "--workload", w, "--rate", "20", "--requests", "6",
            "--ttft", "2", "--tpot", "1", "--attainment", "0.1", "--api-key-env", "SECKEY", "--engine-kind", "vllm", "--out", "{point_dir}/client"],
        },
      ],
    };
    await writeFile(join(dir, "plan.json"), JSON.stringify(plan));
    const r = await ik(["bench", "points", "--base", echo.base, "--model", "echo-model", "--plan", join(dir, "plan.json"), "--out", join(dir, "points"),
      "--api-key-env", "SECKEY", "--poll-s", "0.05", "--json"]);
    assert.ok(r.code === 0 || r.code === 1, r.stderr.slice(-2000));
    const stderr = readFileSync(join(dir, "points", "echoargs", "client.stderr"), "utf8");
    assert.match(stderr, /client got: --password \*\*\* --token \*\*\*/, "the client ran, and what it printed back was scrubbed");
    const res = JSON.parse(readFileSync(join(dir, "points", "echoargs", "result.json"), "utf8"));
    assert.ok(res.client_argv.includes("--hf-token=***") && res.client_argv.includes("--x-token=***"), JSON.stringify(res.client_argv));
    await ik(["report", join(dir, "points"), "--out", join(dir, "reports", "points.md")]);
  });

  test("bench rounds: a manifest env value the engine prints, extra_body secrets in serve.argv and summary.md", async () => {
    const [port] = await freePorts(1);
    // An engine that prints its environment and its arguments (vLLM logs its args, --api-key too).
    const engine = ["bash", "-c", `echo "engine env: HF_TOKEN=$HF_TOKEN"; echo "engine args: $*"; exec ${ikBin()} mock --engine vllm --port ${port} --ttft-ms 5 --tpot-ms 1 --model echo-model`,
      "engine", "--api-key", C.launchKey];
    await writeFile(join(dir, "rounds.json"), JSON.stringify({
      model: { id: "echo-model" },
      workload: { extra_body: { api_key: C.roundsBody, top_k: 5 } },
      engines: [{ label: "e1", name: "vllm", launch: engine, port, env: { HF_TOKEN: C.env } }],
    }));
    await writeFile(join(dir, "prompts.jsonl"), JSON.stringify({ id: "p1", bucket: "short", messages: [{ role: "user", content: "hi" }], max_tokens: 4 }) + "\n");
    const r = await ik(["bench", "rounds", join(dir, "rounds.json"), "--prompts", join(dir, "prompts.jsonl"), "--rounds", "1",
      "--serve-args", "--max-tokens 4 --warmup 0", "--run-dir", join(dir, "rounds"), "--gpu-lock", join(dir, "lock"), "--stop-timeout-s", "5", "--json"], 150_000);
    assert.ok(r.code !== null, r.stderr.slice(-2000));
    const log = readFileSync(join(dir, "rounds", "logs", "e1.r1.log"), "utf8");
    assert.match(log, /engine env: HF_TOKEN=\*\*\*/, "the engine ran and printed its env, scrubbed");
    assert.match(log, /engine args: --api-key \*\*\*/, "and its launch argv, scrubbed");
    const cell = readFileSync(join(dir, "rounds", "rounds", "e1.r1.json"), "utf8");
    assert.match(cell, /--extra-body/, "serve.argv carries the manifest's extra_body");
    assert.match(cell, /api_key\\?"\s*:\s*\\?"\*\*\*/, "with its secret redacted");
    assert.match(readFileSync(join(dir, "rounds", "rounds", "summary.md"), "utf8"), /api_key/, "summary.md names the extra body");
    await ik(["report", join(dir, "rounds"), "--out", join(dir, "reports", "rounds.md")]);
  });

  test("a run that cannot write its record (a store under a regular file): the crash log, if any, holds no secret", async () => {
    await writeFile(join(dir, "not-a-dir"), "x");
    const r = await runIk([...serveArgs(), "--rounds", "1", "--limit-per-bucket", "1", "--label", "crash"], {
      env: { ...env(), IK_RUNS_DIR: join(dir, "not-a-dir", "runs") }, timeoutMs: 90_000, cwd: dir,
    });
    runs.push({ args: ["bench", "serve(crash)"], r });
    assert.notEqual(r.code, 0, "a store that cannot be created fails the run");
    const logs = readdirSync(join(dir, "tmp")).filter((n) => n.startsWith("ik-crash-"));
    if (r.code === 70) assert.ok(logs.length > 0, `exit 70 names a crash log: ${r.stderr}`);
    for (const n of logs) assert.match(readFileSync(join(dir, "tmp", n), "utf8"), /^argv: .*--api-key-env SECKEY/m);
  });

  test("zero hits: every file under the test's folders (runs, run dirs, reports, exports, crash logs), every stdout and stderr", () => {
    const found: string[] = [];
    for (const f of filesUnder(dir)) {
      if (f.endsWith("plan.json") && f === join(dir, "plan.json")) continue; // the plan we wrote holds them on purpose
      if (f === join(dir, "rounds.json")) continue; // as does the manifest
      found.push(...hits(f.slice(dir.length + 1), readFileSync(f, "latin1")));
    }
    for (const { args, r } of runs) {
      found.push(...hits(`stdout of ik ${args.slice(0, 2).join(" ")}`, r.stdout), ...hits(`stderr of ik ${args.slice(0, 2).join(" ")}`, r.stderr));
    }
    assert.ok(runs.length >= 10, `${runs.length} runs`);
    assert.deepEqual(found, [], found.join("\n"));
  });
});
