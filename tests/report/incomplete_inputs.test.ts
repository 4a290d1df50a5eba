/**
 * What a SIGKILL leaves is reported as INCOMPLETE, never refused (issue 18 §3): a `.staging/<id>/`
 * journal without evidence.json (by path and by id; a torn last line dropped), and a bench rounds
 * dir without summary.json (summarised from the cell files that were written). And the launcher's
 * line for a killed worker names the journal it left. In process, both runtimes, < 1 s.
 */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { buildReport, loadReportInput } from "../../lib/report/document/mod.ts";
import { renderMarkdown } from "../../lib/report/markdown/mod.ts";
import { killedWorkerLine, watchWorker } from "../../lib/cli/worker_exit.ts";

let dir: string, root: string;
const ID = "serve_benchmark-20260102T030405Z-0123abcd";
const row = (i: number, ok: boolean, bucket: string) => ({ id: `p${i}`, bucket, ok, ttft_ms: 10 + i, tpot_ms: 2, e2e_ms: 40 + i, round: 0, error_kind: ok ? null : "http" });

before(async () => {
  dir = await mkdtemp(join(tmpdir(), "ik-incomplete-"));
  root = join(dir, "runs");
  const j = join(root, ".staging", ID);
  await mkdir(join(j, "outputs", "x"), { recursive: true });
  const rows = [row(1, true, "short"), row(2, true, "long"), row(3, false, "short"), row(4, true, "short")];
  // The kill came mid-write: the last line is cut.
  await writeFile(join(j, "requests.jsonl"), rows.map((r) => JSON.stringify(r)).join("\n") + '\n{"id":"p5","buck');
  await writeFile(join(j, "outputs", "x", "o.jsonl"), "");
  const rd = join(dir, "run", "rounds");
  await mkdir(rd, { recursive: true });
  await writeFile(join(rd, "plan.json"), JSON.stringify({ mode: "single", rounds: 3, engines: [{ label: "a", name: "vllm" }, { label: "b", name: "sglang" }], design: { design: "williams", period: 2, balanced: true } }));
  await writeFile(join(rd, "a.r1.json"), JSON.stringify({ round: 1, position: 0, label: "a", status: "exited_early", detail: "the engine exited before it was ready (exit code 0; port 8000 is held by pid 1234 (python3 x))" }));
  await writeFile(join(rd, "b.r1.json"), JSON.stringify({ round: 1, position: 1, label: "b", status: "port_busy", detail: "something already listens" }));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

test("a .staging journal (no evidence.json) is an INCOMPLETE report of its rows, by path and by id", async () => {
  for (const ref of [join(root, ".staging", ID), ID]) {
    const input = await loadReportInput(ref, root, dir);
    assert.equal(input.kind, "journal");
    const md = renderMarkdown(buildReport(input));
    assert.match(md, /^# ik report: INCOMPLETE journal serve_benchmark-20260102T030405Z-0123abcd/);
    assert.match(md, /never wrote its record \(evidence\.json\).*SIGKILL/);
    assert.match(md, /rows journaled:\*\* 4 \(3 ok, 1 failed\)/);
    assert.match(md, /\| all \| 4 \| 3 \| 1 \| 12 \| 14 \| 2 \| 42 \|/);
    assert.match(md, /\| short \| 3 \| 2 \| 1 \|/);
    assert.match(md, /1 line\(s\) of requests\.jsonl were not a JSON row/);
    assert.match(md, /other staged files: outputs\/x\/o\.jsonl/);
  }
});

test("a store root names its staging journals as INCOMPLETE instead of dropping them", async () => {
  const input = await loadReportInput(root, root, dir);
  assert.equal(input.kind, "store");
  const md = renderMarkdown(buildReport(input));
  assert.match(md, new RegExp(`${ID}: INCOMPLETE: only a staging journal, no record \\(the run was killed, or is still running\\); 'ik report ${join(root, ".staging", ID)}' reads its rows`));
});

test("a rounds dir without summary.json is an INCOMPLETE report of the cells that finished", async () => {
  for (const ref of [join(dir, "run"), join(dir, "run", "rounds")]) {
    const input = await loadReportInput(ref, root, dir);
    assert.equal(input.kind, "rounds");
    const md = renderMarkdown(buildReport(input));
    assert.match(md, /^# ik report: bench rounds .* \(INCOMPLETE\)/);
    assert.match(md, /INCOMPLETE: the run never wrote summary\.json: it was killed/);
    assert.match(md, /2 cells, 2 not ok/);
    assert.match(md, /exited_early \| the engine exited before it was ready \(exit code 0; port 8000 is held by pid 1234/);
    assert.match(md, /- incomplete: the run never wrote summary\.json/);
  }
});

test("a plan.json that is not a rounds plan, without summary.json, is still refused (65)", async () => {
  const d = join(dir, "other");
  await mkdir(d, { recursive: true });
  await writeFile(join(d, "plan.json"), JSON.stringify({ something: 1 }));
  await assert.rejects(loadReportInput(d, root, dir), (e: unknown) => (e as { code?: number }).code === 65);
});

test("the launcher's line for a SIGKILLed worker names the new staging journal, or the rounds dir", async () => {
  const env = (n: string) => (n === "IK_RUNS_DIR" ? root : undefined);
  const before = watchWorker(["bench", "serve"], { cmd: "bench-serve" }, env, dir);
  const rounds = watchWorker(["bench", "rounds", "m.json"], { cmd: "bench-rounds", runDir: join(dir, "run") }, env, dir);
  assert.equal(killedWorkerLine(before, 42, "SIGTERM"), null, "an interrupt it was handed is the worker's to report");
  assert.match(String(killedWorkerLine(before, 42, "SIGKILL")), /^ik: bench serve: the worker \(pid 42\) was killed by SIGKILL \(out of memory\? kill -9\?\); no journal of this run was found/);
  const fresh = "serve_benchmark-" + new Date().toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z") + "-feedbeef";
  await mkdir(join(root, ".staging", fresh), { recursive: true });
  const line = String(killedWorkerLine(before, 42, "SIGKILL"));
  const path = join(root, ".staging", fresh);
  assert.equal(line, `ik: bench serve: the worker (pid 42) was killed by SIGKILL (out of memory? kill -9?); rows journaled so far are in ${path}; 'ik report ${path}' reads it as incomplete`);
  await utimes(join(dir, "run", "rounds", "plan.json"), new Date(), new Date());
  assert.match(String(killedWorkerLine(rounds, 7, "SIGKILL")), new RegExp(`rows journaled so far are in ${join(dir, "run", "rounds")} \\(also ${path}\\); 'ik report ${join(dir, "run", "rounds")}' reads it as incomplete`));
  assert.match(String(killedWorkerLine(rounds, 7, "SIGSEGV")), /killed by SIGSEGV; rows journaled/);
});
