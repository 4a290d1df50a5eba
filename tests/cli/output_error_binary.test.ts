/**
 * A full or read-only disk through dist/ik (issue 18 §2): exit 74, one stderr line naming the path
 * and the error, every whole row kept, nothing torn, and a read-only output refused before the
 * first request (a counting server on 127.0.0.1 sees none).
 *
 * - bench serve --mode load --rates 20,40 --duration-s 3 with IK_RUNS_DIR on a 200 KB tmpfs:
 *   the disk fills mid-run; the sends stop; every journal line parses; the rows kept are the
 *   number the error line (and the record, when it could be written) says.
 * - Single mode on a 60 KB tmpfs and load-trial run on a 24 KB one: the same, for their journals.
 * - A sharded load slice on a 200 KB tmpfs: the same; its staging journal keeps the whole rows.
 * - bench rounds whose bench serve child fills a 12 KB store: rounds stops at that cell with 74.
 * - merge into a 24 KB store: 74 naming the store, the half-merged record discarded.
 * - bench points whose client's output fills a 64 KB --out: 74 naming the point's file, the next
 *   point never runs, manifest.json whole and saying write_failed.
 * - A read-only IK_RUNS_DIR or --run-dir (bench serve single and load), and the read-only case of
 *   bench rounds (run dir, store, GPU lock), bench points, load-trial prepare and run, merge,
 *   summarize --json-out and prompts synth.
 * Needs root for the mounts (CI runs as root; skipped with the reason elsewhere). Bun only
 * (end-to-end; CONTRACTS.md CI time): about 20 s.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { ikBin, type IkRun, runIk } from "../_helpers/ik.ts";
import { mountReadOnly, mountSkipReason, mountTmpfs, unmountAll } from "../_helpers/mounts.ts";
import { freePorts } from "../_helpers/ports.ts";
import { runtime } from "../../lib/runtime/mod.ts";

const skip = runtime.name !== "bun"
  ? "end to end through dist/ik: Bun only (CONTRACTS.md CI time)"
  : !existsSync(ikBin())
  ? "no dist/ik: run npm run build first"
  : mountSkipReason();

/** An OpenAI-compatible server that counts every request it gets (any path) and streams 8 tokens; completions counted apart. */
async function countingServer(): Promise<{ base: string; count(): number; completions(): number; close(): Promise<void> }> {
  let n = 0, completions = 0;
  const server: Server = createServer((req, res) => {
    n++;
    req.resume();
    req.on("end", async () => {
      if (req.method === "GET" && req.url?.startsWith("/v1/models")) {
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify({ object: "list", data: [{ id: "m", object: "model", owned_by: "vllm" }] }));
        return;
      }
      if (req.method === "POST" && req.url?.startsWith("/v1/chat/completions")) {
        completions++;
        res.writeHead(200, { "content-type": "text/event-stream" });
        const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
          `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
        for (let i = 0; i < 8; i++) {
          res.write(chunk({ content: `tok${i} ` }));
          await new Promise((r) => setTimeout(r, 3));
        }
        res.write(chunk({}, "length"));
        res.end("data: [DONE]\n\n");
        return;
      }
      res.statusCode = 404;
      res.end("{}");
    });
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const port = (server.address() as { port: number }).port;
  return { base: `http://127.0.0.1:${port}`, count: () => n, completions: () => completions, close: () => new Promise((ok) => server.close(() => ok())) };
}

/** The lines of stderr that are errors (`ik: …`); progress lines are not. */
const errorLines = (r: IkRun) => r.stderr.split("\n").filter((l) => l.startsWith("ik: "));

/** Exit 74 with exactly one error line that names `path` and `code`. */
function assert74(r: IkRun, path: string, code: string): string {
  assert.equal(r.code, 74, `exit ${r.code}; stderr: ${r.stderr.slice(-1500)}`);
  const lines = errorLines(r);
  assert.equal(lines.length, 1, `one error line: ${JSON.stringify(lines)}`);
  assert.ok(lines[0].includes(path), `the line names ${path}: ${lines[0]}`);
  assert.match(lines[0], new RegExp(`cannot write \\(${code}`));
  assert.doesNotMatch(r.stderr, /internal error|please report/);
  return lines[0];
}

describe("a full or read-only disk is exit 74 and loses nothing (dist/ik)", { skip }, () => {
  let dir = "";
  let srv: Awaited<ReturnType<typeof countingServer>>;
  let ro = "";
  const env = (over: Record<string, string> = {}) => ({ IK_RUNS_DIR: join(dir, "runs"), IK_KEY_FILE: join(dir, "key"), TMPDIR: dir, ...over });
  const ik = (args: string[], over: Record<string, string> = {}, timeoutMs = 60_000) => runIk(args, { env: env(over), cwd: dir, timeoutMs });
  const serve = ["bench", "serve", "--model", "m", "--engine-kind", "vllm", "--max-tokens", "8", "--warmup", "0"];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "ik-ioerr-bin-"));
    srv = await countingServer();
    ro = join(dir, "ro");
    mountReadOnly(join(dir, "ro-src"), ro);
  });
  after(async () => {
    unmountAll();
    await srv?.close();
    await rm(dir, { recursive: true, force: true });
  });

  test("load mode on a 200 KB tmpfs: stops sending at the first failed write, every whole row kept, none torn, the count agrees", async () => {
    const fs = join(dir, "small");
    mountTmpfs(fs, "200k");
    const before = srv.completions();
    const r = await ik([...serve, "--base-url", srv.base, "--mode", "load", "--rates", "20,40", "--duration-s", "3"], { IK_RUNS_DIR: join(fs, "runs") }, 90_000);
    const line = assert74(r, fs, "ENOSPC");
    const m = /stopped sending; (\d+) whole rows kept in (\S+)\/requests\.jsonl/.exec(line);
    assert.ok(m, `the line says how many rows are kept and where: ${line}`);
    const kept = Number(m[1]), at = m[2];
    const text = readFileSync(join(at, "requests.jsonl"), "utf8");
    assert.ok(text.endsWith("\n"), "no torn last line");
    const rows = text.slice(0, -1).split("\n").map((l) => JSON.parse(l));
    assert.equal(rows.length, kept, "the journal holds the rows the line names");
    assert.ok(kept > 0, "rows were measured before the disk filled");
    // Every JSONL file the run left holds whole lines only.
    const walk = (d: string): string[] => readdirSync(d).flatMap((n) => (statSync(join(d, n)).isDirectory() ? walk(join(d, n)) : [join(d, n)]));
    for (const f of walk(join(fs, "runs"))) {
      assert.ok(!f.endsWith(".part"), `no part file left: ${f}`);
      if (f.endsWith(".jsonl")) {
        const t = readFileSync(f, "utf8");
        assert.ok(t === "" || t.endsWith("\n"), `${f} ends with a whole line`);
        for (const l of t.split("\n").filter(Boolean)) JSON.parse(l);
      }
      if (f.endsWith("evidence.json")) {
        const rec = JSON.parse(readFileSync(f, "utf8"));
        assert.equal(rec.complete, false, "a record written after the failure is incomplete");
        assert.ok(rec.limitations.some((x: string) => x.includes(`keeps ${kept} whole rows`)), JSON.stringify(rec.limitations));
      }
    }
    // Sends stop at the first failure: only the requests then in flight end unjournaled (without the
    // stop the rest of the level, dozens of requests, would be sent into a full disk).
    const sent = srv.completions() - before;
    assert.ok(sent - kept <= 10, `the sends stopped at the failure: ${sent} sent, ${kept} journaled`);
    await new Promise((ok) => setTimeout(ok, 300));
    assert.equal(srv.completions() - before, sent, "nothing is sent after exit");
  });

  /** The rows of a JSONL file: it ends with a whole line and every line parses. */
  const wholeRows = (path: string) => {
    const t = readFileSync(path, "utf8");
    assert.ok(t === "" || t.endsWith("\n"), `no torn last line in ${path}`);
    return t.split("\n").filter(Boolean).map((l) => JSON.parse(l));
  };

  test("single mode on a 60 KB tmpfs: the first row that cannot be journaled stops the rounds; the rows kept are whole and counted", async () => {
    const fs = join(dir, "small-single");
    mountTmpfs(fs, "60k");
    const before = srv.completions();
    const r = await ik([...serve, "--base-url", srv.base, "--rounds", "300", "--limit-per-bucket", "2"], { IK_RUNS_DIR: join(fs, "runs") }, 90_000);
    const line = assert74(r, join(fs, "runs"), "ENOSPC");
    const m = /stopped sending; (\d+) whole rows kept in (\S+)\/requests\.jsonl/.exec(line);
    assert.ok(m, line);
    assert.equal(wholeRows(join(m[2], "requests.jsonl")).length, Number(m[1]));
    const sent = srv.completions() - before;
    assert.equal(sent, Number(m[1]) + 1, `one request after the last journaled row, then no more (${sent} sent)`);
  });

  test("load-trial run on a 24 KB tmpfs: stops sending, whole rows kept and counted, exit 74", async () => {
    const prep = await ik(["load-trial", "prepare", "--out", join(dir, "lt-full"), "--synth", "16:8", "--requests", "50", "--json"]);
    assert.equal(prep.code, 0, prep.stderr);
    const fs = join(dir, "small-trial");
    mountTmpfs(fs, "24k");
    const before = srv.completions();
    const r = await ik(["load-trial", "run", "--base", srv.base, "--expected-model", "m", "--workload", JSON.parse(prep.stdout).path, "--rate", "100",
      "--requests", "400", "--ttft", "2", "--tpot", "1", "--attainment", "0.1", "--engine-kind", "vllm", "--out", join(fs, "trial")], {}, 90_000);
    const line = assert74(r, join(fs, "trial"), "ENOSPC");
    const m = /stopped sending; (\d+) whole rows kept in (\S+requests\.jsonl)/.exec(line);
    assert.ok(m, line);
    assert.equal(wholeRows(m[2]).length, Number(m[1]));
    const sent = srv.completions() - before;
    assert.ok(sent < 400 && sent - Number(m[1]) <= 10, `the sends stopped at the failure: ${sent} sent, ${m[1]} journaled`);
    if (existsSync(join(fs, "trial", "summary.json"))) assert.equal(JSON.parse(readFileSync(join(fs, "trial", "summary.json"), "utf8")).complete, false);
  });

  test("a sharded load slice on a 200 KB tmpfs: stops sending, its staging journal keeps whole rows, counted", async () => {
    const fs = join(dir, "small-shard");
    mountTmpfs(fs, "200k");
    await writeFile(join(dir, "key"), "ab".repeat(32) + "\n", { mode: 0o600 }); // a shared key, as shards need
    const before = srv.completions();
    const r = await ik([...serve, "--base-url", srv.base, "--mode", "load", "--rates", "20,40", "--duration-s", "3", "--shard", "0/1",
      "--start-at", String(Date.now() + 2500), "--level-gap-s", "0.5", "--group", "ioerr-g", "--gpu-name", "NVIDIA H100 80GB HBM3", "--gpu-count", "1"], { IK_RUNS_DIR: join(fs, "runs") }, 90_000);
    const line = assert74(r, fs, "ENOSPC");
    const m = /stopped sending; (\d+) whole rows kept in (\S+\/\.staging\/\S+\/requests\.jsonl)/.exec(line);
    assert.ok(m, line);
    assert.equal(wholeRows(m[2]).length, Number(m[1]));
    const sent = srv.completions() - before;
    assert.ok(sent - Number(m[1]) <= 10, `the sends stopped at the failure: ${sent} sent, ${m[1]} journaled`);
  });

  test("merge into a 24 KB store: the first failed write stops it, exit 74 naming the store, no record or staging left", async () => {
    await writeFile(join(dir, "key"), "ab".repeat(32) + "\n", { mode: 0o600 });
    const slices = join(dir, "merge-src");
    const r = await ik([...serve, "--base-url", srv.base, "--mode", "load", "--rates", "20,40", "--duration-s", "1.5", "--shard", "0/1",
      "--start-at", String(Date.now() + 1500), "--level-gap-s", "0.2", "--group", "ioerr-m", "--gpu-name", "NVIDIA H100 80GB HBM3", "--gpu-count", "1"], { IK_RUNS_DIR: slices }, 60_000);
    assert.equal(r.code, 0, r.stderr);
    const fs = join(dir, "small-merge");
    mountTmpfs(fs, "24k");
    const m = await ik(["merge", slices], { IK_RUNS_DIR: join(fs, "runs") });
    assert74(m, join(fs, "runs"), "ENOSPC");
    const walk = (d: string): string[] => (existsSync(d) ? readdirSync(d).flatMap((n) => (statSync(join(d, n)).isDirectory() ? walk(join(d, n)) : [join(d, n)])) : []);
    assert.deepEqual(walk(join(fs, "runs")).filter((f) => !f.endsWith(".lock")), [], "the half-merged record was discarded");
  });

  test("bench points whose client fills a 64 KB --out: stops at that point (exit 74 naming the file), the next never runs, manifest.json whole", async () => {
    const fs = join(dir, "small-points");
    mountTmpfs(fs, "64k");
    const mock = await import("../mock/_helpers.ts").then((h) => h.startMock(["--max-batch", "2", "--step-ms", "5"]));
    try {
      const noisy = ["sh", "-c", "head -c 300000 /dev/zero | tr '\\0' x"];
      const pt = (id: string) => ({ id, workload: { file: join(dir, "none.json"), rate_rps: 1, requests: 1 }, client_timeout_s: 20, drain_timeout_s: 5, client_argv: noisy });
      await writeFile(join(dir, "plan-full.json"), JSON.stringify({ schema: 1, points: [pt("p1"), pt("p2")] }));
      const out = join(fs, "points");
      const r = await ik(["bench", "points", "--base", mock.base, "--model", "mock-model", "--plan", join(dir, "plan-full.json"), "--out", out, "--poll-s", "0.05"], {}, 60_000);
      assert74(r, join(out, "p1"), "ENOSPC");
      assert.equal(existsSync(join(out, "p2")), false, "the next point never ran");
      const manifest = JSON.parse(readFileSync(join(out, "manifest.json"), "utf8"));
      assert.equal(manifest.kind, "bench_points");
      // The torn client.stdout is removed, so the manifest can still say why the plan stopped.
      assert.equal(manifest.outcome.status, "write_failed");
      assert.deepEqual(manifest.outcome.points.map((p: { id: string; status: string }) => [p.id, p.status]), [["p1", "write_failed"], ["p2", "not_run"]]);
    } finally {
      await mock.stop();
    }
  });

  test("bench serve: a read-only IK_RUNS_DIR or --run-dir is refused before any request (single and load)", async () => {
    const before = srv.count();
    assert74(await ik([...serve, "--base-url", srv.base, "--rounds", "1"], { IK_RUNS_DIR: join(ro, "runs") }), join(ro, "runs"), "EROFS");
    assert74(await ik([...serve, "--base-url", srv.base, "--mode", "load", "--rates", "20", "--duration-s", "1"], { IK_RUNS_DIR: ro }), ro, "EROFS");
    assert74(await ik([...serve, "--base-url", srv.base, "--rounds", "1", "--run-dir", join(ro, "run")]), join(ro, "run"), "EROFS");
    assert.equal(srv.count() - before, 0, "the server got no request");
  });

  test("bench rounds: a read-only run dir, store or GPU lock folder is refused before an engine starts", async () => {
    const marker = join(dir, "engine-started");
    await writeFile(join(dir, "rounds.json"), JSON.stringify({
      model: { id: "m" },
      engines: [{ label: "e1", name: "vllm", launch: ["sh", "-c", `touch ${marker}; sleep 30`], port: 1 }],
    }));
    const args = ["bench", "rounds", join(dir, "rounds.json"), "--rounds", "1", "--stop-timeout-s", "2"];
    assert74(await ik([...args, "--run-dir", join(ro, "rounds"), "--gpu-lock", join(dir, "lock")]), join(ro, "rounds"), "EROFS");
    assert74(await ik([...args, "--run-dir", join(dir, "rounds-store"), "--gpu-lock", join(dir, "lock")], { IK_RUNS_DIR: ro }), ro, "EROFS");
    const lock = assert74(await ik([...args, "--run-dir", join(dir, "rounds-lock"), "--gpu-lock", join(ro, "ik-gpu.lock")]), join(ro, "ik-gpu.lock"), "EROFS");
    assert.match(lock, /--gpu-lock/);
    assert.ok(!existsSync(marker), "no engine was launched");
  });

  test("bench rounds whose bench serve fills the store (a 12 KB tmpfs): stops at that cell, exit 74 naming the path", async () => {
    const fs = join(dir, "small-rounds");
    mountTmpfs(fs, "12k");
    const [port] = await freePorts(1);
    await writeFile(join(dir, "rounds-full.json"), JSON.stringify({
      model: { id: "m" },
      engines: [
        { label: "e1", name: "vllm", launch: [ikBin(), "mock", "--engine", "vllm", "--port", String(port), "--ttft-ms", "2", "--tpot-ms", "1", "--model", "m"], port },
        { label: "e2", name: "vllm", launch: [ikBin(), "mock", "--engine", "vllm", "--port", String(port), "--ttft-ms", "2", "--tpot-ms", "1", "--model", "m"], port },
      ],
    }));
    const r = await ik(["bench", "rounds", join(dir, "rounds-full.json"), "--rounds", "2", "--serve-args", "--max-tokens 8 --warmup 0 --limit-per-bucket 2",
      "--run-dir", join(dir, "rounds-full"), "--gpu-lock", join(dir, "lock-full"), "--stop-timeout-s", "5"], { IK_RUNS_DIR: join(fs, "runs") }, 120_000);
    const line = assert74(r, join(fs, "runs"), "ENOSPC");
    assert.match(line, /^ik: bench rounds: cell e\d r1: .*stopped after 1 cell/);
    const plan = JSON.parse(readFileSync(join(dir, "rounds-full", "rounds", "plan.json"), "utf8"));
    assert.equal(plan.stopped_on_write_failure.after_cells, 1, "the plan says where it stopped");
    assert.ok(!existsSync(join(dir, "lock-full")), "the GPU lock is released");
  });

  test("load-trial prepare and run, bench points: a read-only --out is refused (run and points send nothing)", async () => {
    assert74(await ik(["load-trial", "prepare", "--out", join(ro, "lt"), "--synth", "16:8", "--requests", "4"]), join(ro, "lt"), "EROFS");
    const prep = await ik(["load-trial", "prepare", "--out", join(dir, "lt"), "--synth", "16:8", "--requests", "4", "--json"]);
    assert.equal(prep.code, 0, prep.stderr);
    const w = JSON.parse(prep.stdout).path as string;
    const before = srv.count();
    const run = await ik(["load-trial", "run", "--base", srv.base, "--expected-model", "m", "--workload", w, "--rate", "20", "--requests", "4",
      "--ttft", "2", "--tpot", "1", "--attainment", "0.1", "--engine-kind", "vllm", "--out", join(ro, "ltr")]);
    assert74(run, join(ro, "ltr"), "EROFS");
    await writeFile(join(dir, "plan.json"), JSON.stringify({
      schema: 1,
      points: [{ id: "p1", workload: { file: w, rate_rps: 1, requests: 1 }, client_timeout_s: 5, drain_timeout_s: 1, client_argv: ["true"] }],
    }));
    assert74(await ik(["bench", "points", "--base", srv.base, "--model", "m", "--plan", join(dir, "plan.json"), "--out", join(ro, "points")]), join(ro, "points"), "EROFS");
    assert.equal(srv.count() - before, 0, "the server got no request");
  });

  test("merge, summarize --json-out and prompts synth into a read-only folder", async () => {
    await rm(join(dir, "slices"), { recursive: true, force: true });
    assert74(await ik(["merge", join(dir, "slices")], { IK_RUNS_DIR: ro }), ro, "EROFS");
    assert74(await ik(["summarize", "vllm", "--runs", join(dir, "runs.tsv"), "--results", dir, "--json-out", join(ro, "summary.json")]), ro, "EROFS");
    assert74(await ik(["prompts", "synth", "--bucket", "a:8:4", "--per-bucket", "2", "--out", join(ro, "p.jsonl")]), ro, "EROFS");
    assert.deepEqual(readdirSync(join(dir, "ro-src")), [], "nothing was written under the read-only mount");
  });
});
