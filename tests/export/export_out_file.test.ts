/**
 * `ik export --out PATH` where PATH is an existing regular file: a one-line usage error (64)
 * naming it ("is a file, not a folder"), for --format csv and vllm, before anything is written
 * (the file keeps its bytes, nothing appears beside it); a missing folder is still created. In
 * process against a loopback mock, < 3 s.
 */
import assert from "node:assert/strict";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { parse } from "@optique/core/parser";
import { IkError } from "../../lib/cli/errors.ts";
import { runBenchServe } from "../../lib/commands/bench_serve.ts";
import { type BenchServeFlags, benchServeCommand } from "../../lib/commands/bench_serve_flags.ts";
import type { CommandContext } from "../../lib/commands/context.ts";
import { runExport } from "../../lib/commands/export.ts";
import { runtime } from "../../lib/runtime/mod.ts";
import { serveMock } from "../mock/_helpers.ts";

test("--out naming an existing file is refused with 64 before anything is written (csv, vllm)", async () => {
  const dir = await mkdtemp(join(tmpdir(), "ik-export-outfile-"));
  const mock = await serveMock({ engine: "vllm", ttftMs: 2, tpotMs: 1 });
  try {
    const env: Record<string, string> = { IK_RUNS_DIR: join(dir, "runs"), IK_KEY_FILE: join(dir, "key") };
    const out: string[] = [];
    const ctx: CommandContext = { runtime: { ...runtime, env: (k: string) => env[k] ?? runtime.env(k), cwd: () => dir }, out: (t) => out.push(t), err: () => {}, json: true, signal: new AbortController().signal };
    const words = ["serve", "--base-url", mock.base, "--model", "mock-model", "--mode", "load", "--rates", "20", "--requests", "4", "--warmup", "0", "--max-tokens", "4", "--json"];
    const flags = parse(benchServeCommand(), words);
    assert.ok(flags.success);
    assert.equal(await runBenchServe(ctx, flags.value as BenchServeFlags), 0);
    const id = String(JSON.parse(out.join("")).data.measurement);
    const file = join(dir, "afile");
    await writeFile(file, "keep me\n");
    for (const format of ["csv", "vllm"] as const) {
      const e = await runExport(ctx, { cmd: "export", record: id, format, out: file, json: false }).then(() => null, (x) => x);
      assert.ok(e instanceof IkError, `${format}: ${e}`);
      assert.equal(e.code, 64);
      assert.equal(e.oneLine(), `ik: --out ${file}: is a file, not a folder; give a folder to write the files in (it is created if it does not exist)`);
      assert.equal(await readFile(file, "utf8"), "keep me\n");
      assert.deepEqual((await readdir(dir)).sort(), ["afile", "key", "runs"]);
    }
    // a folder that does not exist yet is still made
    assert.equal(await runExport(ctx, { cmd: "export", record: id, format: "vllm", out: join(dir, "new", "sub"), json: false }), 0);
    assert.deepEqual((await readdir(join(dir, "new", "sub"))).sort(), ["runs.tsv", "vllm-r20.json"]);
  } finally {
    await mock.close();
    await rm(dir, { recursive: true, force: true });
  }
});
