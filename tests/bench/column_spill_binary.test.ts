/**
 * Through dist/ik: a load level parks its columns in one unlinked file in the run's folder while it
 * runs (so a long level's memory does not grow with its requests), and the finished run's folder
 * holds no trace of it.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readlinkSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { ikBin, startArgv } from "../_helpers/ik.ts";
import { type MockProc, startMock } from "../mock/_helpers.ts";
import { runtime } from "../../lib/runtime/mod.ts";

/** Every path under `dir`, recursively. */
function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]));
}

describe("a load level's column spill (binary)", { skip: runtime.name !== "bun" ? "Bun only (end to end; CONTRACTS.md CI time)" : !existsSync("/proc/self/fd") && "no /proc" }, () => {
  let dir = "";
  let mock: MockProc;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "ik-spill-bin-"));
    mock = await startMock(["--engine", "vllm", "--ttft-ms", "20", "--tpot-ms", "2"]);
  });
  after(async () => {
    await mock?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  test("open and unlinked in the run's staging folder while a level runs; nothing left after", async () => {
    const runs = join(dir, "runs");
    const p = startArgv([ikBin()], ["bench", "serve", "--mode", "load", "--base-url", mock.base, "--model", "mock-model", "--max-tokens", "8", "--json",
      "--rates", "20", "--duration-s", "3", "--warmup", "0"], { env: { IK_RUNS_DIR: runs, IK_KEY_FILE: join(dir, "key") } });
    await p.waitFor(/load r20: sent [1-9]/, 60_000);
    const links: string[] = [];
    for (const fd of readdirSync(`/proc/${p.pid}/fd`)) {
      try {
        links.push(readlinkSync(`/proc/${p.pid}/fd/${fd}`));
      } catch { /* closed meanwhile */ }
    }
    const spills = links.filter((l) => l.includes("/.columns-"));
    assert.equal(spills.length, 1, links.join("\n"));
    assert.ok(spills[0].startsWith(runs), spills[0]);
    assert.match(spills[0], /\/\.columns-r20-\d+-\d+ \(deleted\)$/);
    const st = await p.exited;
    assert.equal(st.code, 0, p.stderr());
    const files = walk(runs);
    assert.ok(files.some((f) => f.endsWith("requests.jsonl")), files.join("\n"));
    assert.deepEqual(files.filter((f) => f.includes(".columns-")), []);
  });
});
