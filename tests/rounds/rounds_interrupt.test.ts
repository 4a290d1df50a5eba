/**
 * `ik bench rounds` interrupted while its engine is slow to stop (a launcher shell that traps
 * SIGTERM): the stop is cut short once ik is interrupted, so the run still ends inside the CLI's
 * 10 s grace with exit 130, the cell, plan and summary written, the plan marked interrupted, the
 * GPU lock released and no process left, even with the default 30 s `--stop-timeout-s`.
 * Bun only (end to end through dist/ik, CONTRACTS.md "CI time"; ~15 s).
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { freePort } from "../_helpers/ports.ts";
import { ikBin } from "../_helpers/ik.ts";
import { runtime } from "../../lib/runtime/mod.ts";

const BUN = runtime.name === "bun";
let dir: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), "ik-rounds-int-"));
  await writeFile(join(dir, "p.jsonl"), [
    { id: "p1", bucket: "short", messages: [{ role: "user", content: "Hello there" }] },
    { id: "p2", bucket: "short", messages: [{ role: "user", content: "Tell me a story" }] },
  ].map((r) => JSON.stringify(r)).join("\n") + "\n");
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

const readJson = async (p: string) => JSON.parse(await readFile(p, "utf8"));

describe("bench rounds interrupted with a slow-stopping engine", { skip: BUN ? false : "Bun only (end to end)" }, () => {
  test("SIGINT mid-measurement, engine wrapper traps TERM: 130 within the grace, cell/plan/summary kept, lock released (~15 s)", async () => {
    const ik = ikBin();
    const port = await freePort();
    const marker = `rounds-slowstop-${process.pid}`;
    // The wrapper survives SIGTERM (a trap, as a site's launcher script may have); only SIGKILL ends it.
    const wrapper = `${ik} mock --engine vllm --port ${port} --tpot-ms 10 --model ${marker} & trap 'echo wrapper: TERM ignored' TERM; while :; do sleep 0.2; done`;
    await writeFile(join(dir, "m.json"), JSON.stringify({ engines: [{ label: "a", name: "vllm", launch: ["sh", "-c", wrapper], port }] }));
    const run = join(dir, "run");
    const lock = join(dir, "lock");
    const child = spawn(ik, ["bench", "rounds", join(dir, "m.json"), "--prompts", join(dir, "p.jsonl"), "--rounds", "2", "--serve-args", "--max-tokens 400",
      "--run-dir", run, "--gpu-lock", lock], { env: { ...runtime.envAll(), IK_RUNS_DIR: join(dir, "runs"), IK_KEY_FILE: join(dir, "key") }, stdio: ["ignore", "pipe", "pipe"] });
    let err = "";
    child.stderr!.on("data", (d) => (err += d));
    let closed = false;
    const done = new Promise<number | null>((ok) => child.on("close", (code) => { closed = true; ok(code); }));
    const t0 = Date.now();
    while (!closed && !/a r1: warm-up 2\/2/.test(err) && Date.now() - t0 < 30_000) await new Promise((r) => setTimeout(r, 100));
    assert.match(err, /a r1: warm-up 2\/2/);
    await new Promise((r) => setTimeout(r, 1000)); // measuring: 2 requests of 400 tokens at 10 ms take ~8 s
    const tInt = Date.now();
    child.kill("SIGINT");
    const killer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    const code = await done;
    clearTimeout(killer);
    const took = (Date.now() - tInt) / 1000;
    assert.equal(code, 130, err.slice(-2000));
    assert.ok(took < 9.5, `ended ${took} s after SIGINT: inside the 10 s grace, not cut off by it`);
    const cell = await readJson(join(run, "rounds", "a.r1.json"));
    assert.equal(cell.status, "interrupted");
    assert.equal(cell.stop.signal, "SIGKILL");
    assert.equal(cell.stop.group_gone, true);
    const plan = await readJson(join(run, "rounds", "plan.json"));
    assert.equal(plan.interrupted.after_cells, 1);
    assert.ok(existsSync(join(run, "rounds", "summary.json")) && existsSync(join(run, "rounds", "summary.md")));
    // What ran, not what was planned: no whole round, so no balanced order either.
    assert.deepEqual(plan.ran, { cells: 1, whole_rounds: 0, balanced: false });
    const md = await readFile(join(run, "rounds", "summary.md"), "utf8");
    assert.match(md, /^# bench rounds: single mode, STOPPED SHORT: 0 of 2 rounds whole \(1 cells\), 1 engines\n/);
    assert.match(md, /balanced: NO over the 0 whole round\(s\) that ran/);
    assert.match(md, /\nInterrupted after 1 cell\(s\): interrupted: /);
    assert.equal(existsSync(lock), false, "the GPU lock is released");
    const left = (spawnSync("pgrep", ["-af", marker], { encoding: "utf8" }).stdout ?? "").split("\n").filter((l) => l.trim() && !l.includes("pgrep"));
    assert.deepEqual(left, []);
  });
});
