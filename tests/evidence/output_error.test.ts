/**
 * Exit 74 in the library (issue 18 §2): the JSONL writer keeps only whole lines when the disk fills
 * (a real 64 KiB tmpfs) and tells its first failure once; a record is written whole or not at all;
 * checkWritable refuses a read-only bind mount, a full disk and a path under a file; the GPU lock
 * on a read-only folder is exit 74; cli.ts maps a stray EROFS to 74 and a read's ENOENT still to 70.
 * Mount cases need root (CI runs as root) and are skipped with the reason elsewhere. About 1 s.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { reportError } from "../../cli.ts";
import { IkError } from "../../lib/cli/errors.ts";
import { acquireGpuLock } from "../../lib/engines_host/gpu_lock.ts";
import { checkWritable, JsonlWriter, newEvidenceId, StagedRun, writeWhole } from "../../lib/evidence/mod.ts";
import { runtime } from "../../lib/runtime/mod.ts";
import { runIk } from "../_helpers/ik.ts";
import { startMock } from "../mock/_helpers.ts";
import { mountReadOnly, mountSkipReason, mountTmpfs, unmountAll } from "../_helpers/mounts.ts";

/** A row of about 300 bytes whose size varies, so lines straddle the disk's last page. */
const row = (i: number) => ({ seq: i, ok: true, text: "x".repeat(200 + (i * 37) % 150), ttft_ms: i / 7 });

/** Lines of a file: every one must parse and the file must end with a newline (no torn line). */
function wholeLines(path: string): unknown[] {
  const text = readFileSync(path, "utf8");
  if (text === "") return [];
  assert.ok(text.endsWith("\n"), `the last line of ${path} is torn: …${JSON.stringify(text.slice(-60))}`);
  return text.slice(0, -1).split("\n").map((l, i) => {
    try {
      return JSON.parse(l);
    } catch {
      assert.fail(`line ${i + 1} of ${path} is not JSON: ${l.slice(0, 80)}`);
    }
  });
}

function assertIo(e: unknown, where: RegExp | string, code: string): true {
  assert.ok(e instanceof IkError, `an IkError, got ${e}`);
  assert.equal(e.code, 74);
  if (typeof where === "string") assert.equal(e.where, where);
  else assert.match(e.where, where);
  assert.match(e.message, new RegExp(`cannot write \\(${code}`));
  assert.doesNotMatch(e.oneLine(), /\n/);
  return true;
}

test("JsonlWriter on /dev/full: the first failure is exit 74 naming the file, told once; later lines are dropped", { skip: existsSync("/dev/full") ? false : "no /dev/full here" }, async () => {
  const seen: IkError[] = [];
  const w = await JsonlWriter.open("/dev/full", { onError: (e) => seen.push(e) });
  for (let i = 0; i < 5; i++) w.write(row(i));
  await w.flush();
  assert.equal(seen.length, 1, "onError is called once");
  assertIo(w.failed, "/dev/full", "ENOSPC");
  assert.equal(w.lines, 0);
  w.write(row(9));
  await assert.rejects(w.close(), (e) => assertIo(e, "/dev/full", "ENOSPC"));
});

describe("on real small and read-only file systems", { skip: mountSkipReason() }, () => {
  let dir = "";
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "ik-ioerr-"));
  });
  after(async () => {
    unmountAll();
    await rm(dir, { recursive: true, force: true });
  });

  test("a full disk: the journal holds only whole lines, as many as the writer counts; nothing after the failure", async () => {
    const fs = join(dir, "full1");
    mountTmpfs(fs, "64k");
    const seen: IkError[] = [];
    const path = join(fs, "run", "requests.jsonl");
    const w = await JsonlWriter.open(path, { onError: (e) => seen.push(e) });
    for (let i = 0; i < 1000; i++) w.write(row(i));
    await w.flush();
    assert.equal(seen.length, 1, "told once");
    assertIo(w.failed, path, "ENOSPC");
    const rows = wholeLines(path);
    assert.ok(rows.length > 50 && rows.length < 1000, `${rows.length} rows fitted`);
    assert.equal(rows.length, w.lines, "the writer's count is the file's");
    assert.deepEqual(rows.map((r) => (r as { seq: number }).seq), rows.map((_, i) => i), "in order, none skipped");
    const size = statSync(path).size;
    w.write(row(5000));
    await assert.rejects(w.close(), (e) => assertIo(e, path, "ENOSPC"));
    assert.equal(statSync(path).size, size, "nothing is written after the failure");
  });

  test("a full disk: StagedRun keeps its whole journal rows; evidence.json is whole or absent; writeWhole leaves no part", async () => {
    const fs = join(dir, "full2");
    mountTmpfs(fs, "64k");
    const run = await StagedRun.create(fs, newEvidenceId("serve_benchmark"));
    let err: unknown = null;
    for (let i = 0; i < 1000 && err === null; i++) await run.journal(row(i)).catch((e) => (err = e));
    assertIo(err, join(run.dir, "requests.jsonl"), "ENOSPC");
    assert.equal(wholeLines(join(run.dir, "requests.jsonl")).length, run.rows);
    await assert.rejects(run.journal(row(1)), (e) => assertIo(e, join(run.dir, "requests.jsonl"), "ENOSPC"), "the journal stays failed");
    await assert.rejects(run.finish({ big: "y".repeat(200_000) }), (e) => assertIo(e, join(run.dir, "evidence.json"), "ENOSPC"));
    assert.deepEqual(readdirSync(run.dir).sort(), ["requests.jsonl"], "no 0-byte evidence.json, no part file");
    assert.equal(wholeLines(join(run.dir, "requests.jsonl")).length, run.rows, "the rows are still there");
    await assert.rejects(writeWhole(join(fs, "other.json"), "z".repeat(100_000)), (e) => assertIo(e, join(fs, "other.json"), "ENOSPC"));
    assert.ok(!existsSync(join(fs, "other.json")) && !existsSync(join(fs, "other.json.part")));
    await assert.rejects(checkWritable([join(fs, "more")]), (e) => assertIo(e, join(fs, "more"), "ENOSPC"), "a full disk is found before a run");
  });

  test("bench serve with a --run-dir that fills: exit 74 naming it, and the record is whole in the store, saying the copy stopped", async () => {
    const fs = join(dir, "full-rundir");
    mountTmpfs(fs, "32k");
    const mock = await startMock(["--ttft-ms", "1", "--tpot-ms", "1"]);
    try {
      const r = await runIk(["bench", "serve", "--base-url", mock.base, "--model", "mock-model", "--rounds", "3", "--warmup", "0", "--max-tokens", "8", "--run-dir", join(fs, "rd"), "--json"],
        { env: { IK_RUNS_DIR: join(dir, "store") }, timeoutMs: 60_000 });
      assert.equal(r.code, 74, r.stderr);
      const m = /the copy in --run-dir stopped there; the record (serve_benchmark-\S+) is whole in (\S+)/.exec(r.stderr);
      assert.ok(m, r.stderr);
      assert.match(r.stderr, /cannot write \(ENOSPC/);
      const rec = JSON.parse(readFileSync(join(dir, "store", m[1], "evidence.json"), "utf8"));
      assert.equal(rec.complete, true);
      assert.equal(wholeLines(join(dir, "store", m[1], "requests.jsonl")).length, 36, "every measured row kept");
      // Whichever run-dir file the disk refused first (an output copy, or the metrics file).
      assert.ok(rec.limitations.some((l: string) => /^the (copy of the outputs and inputs in --run-dir stopped|run dir's metrics file was not written) \(.*ENOSPC/.test(l)), rec.limitations.join("\n"));
    } finally {
      await mock.stop();
    }
  });

  test("load mode, a --run-dir that fills at the end (its metrics file): exit 74, both records whole in the store and saying so", async () => {
    const fs = join(dir, "full-rundir-load");
    mountTmpfs(fs, "8k");
    writeFileSync(join(fs, "fill"), new Uint8Array(3000));
    const mock = await startMock(["--ttft-ms", "1", "--tpot-ms", "1"]);
    try {
      const r = await runIk(["bench", "serve", "--base-url", mock.base, "--model", "mock-model", "--mode", "load", "--rates", "20", "--requests", "4", "--warmup", "0", "--run-dir", join(fs, "rd"), "--json"],
        { env: { IK_RUNS_DIR: join(dir, "store-load") }, timeoutMs: 60_000 });
      assert.equal(r.code, 74, r.stderr);
      const m = /vllm\.load\.json: cannot write \(ENOSPC.*; the records (serve_benchmark-\S+) and (capacity-\S+) are whole in the store/.exec(r.stderr);
      assert.ok(m, r.stderr);
      const measured = JSON.parse(readFileSync(join(dir, "store-load", m[1], "evidence.json"), "utf8"));
      assert.ok(measured.limitations.some((l: string) => /^the run dir's metrics file was not written \(.*ENOSPC/.test(l)), measured.limitations.join("\n"));
      assert.ok(existsSync(join(dir, "store-load", m[2], "evidence.json")));
    } finally {
      await mock.stop();
    }
  });

  test("bench vllm whose result file does not fit: exit 74 naming it and ik's records, which are whole", async () => {
    const fs = join(dir, "full-result");
    mountTmpfs(fs, "8k");
    writeFileSync(join(fs, "fill"), new Uint8Array(3000));
    const mock = await startMock(["--engine", "vllm", "--ttft-ms", "1", "--tpot-ms", "1"]);
    try {
      const r = await runIk(["bench", "vllm", "--base-url", mock.base, "--model", "mock-model", "--random-input-len", "8", "--random-output-len", "16", "--num-prompts", "12",
        "--save-result", "--save-detailed", "--result-dir", fs], { env: { IK_RUNS_DIR: join(dir, "store-vllm") }, timeoutMs: 60_000 });
      assert.equal(r.code, 74, r.stderr);
      const m = /cannot write \(ENOSPC.*; the run is measured: ik's records (serve_benchmark-\S+) and (capacity-\S+) are whole/.exec(r.stderr);
      assert.ok(m, r.stderr);
      assert.ok(existsSync(join(dir, "store-vllm", m[1], "evidence.json")) && existsSync(join(dir, "store-vllm", m[2], "evidence.json")));
      assert.deepEqual(readdirSync(fs), ["fill"], "no part file, no torn result");
    } finally {
      await mock.stop();
    }
  });

  test("checkWritable: a read-only bind mount is refused (EROFS) and nothing is left; a new folder passes and is not created", async () => {
    const ro = join(dir, "ro");
    mountReadOnly(join(dir, "ro-src"), ro);
    await assert.rejects(checkWritable([join(dir, "ok"), ro]), (e) => assertIo(e, ro, "EROFS"));
    await assert.rejects(checkWritable([join(ro, "runs", "deeper")]), (e) => assertIo(e, join(ro, "runs", "deeper"), "EROFS"));
    await assert.rejects(checkWritable([{ dir: ro, as: "--gpu-lock x" }]), (e) => assertIo(e, "--gpu-lock x", "EROFS"));
    await checkWritable([join(dir, "new", "folder"), null, undefined]);
    assert.ok(!existsSync(join(dir, "new")), "the check creates nothing");
    assert.deepEqual(readdirSync(dir).filter((n) => n.startsWith(".ik-write-check")), [], "no probe left");
    writeFileSync(join(dir, "a-file"), "x");
    await assert.rejects(checkWritable([join(dir, "a-file", "runs")]), (e) => assertIo(e, /a-file/, "ENOTDIR"));
  });

  test("the GPU lock in a read-only folder is exit 74 naming the lock", async () => {
    const ro = join(dir, "ro-lock");
    mountReadOnly(join(dir, "ro-lock-src"), ro);
    const path = join(ro, "ik-gpu.lock");
    await assert.rejects(
      acquireGpuLock(path, { pid: 4242, command: "ik test", env: {}, pidAlive: () => false }),
      (e) => assertIo(e, `--gpu-lock ${path}`, "EROFS"),
    );
  });
});

test("cli.ts: a stray EROFS/ENOSPC is exit 74, one line; a read's ENOENT is still a bug (70)", async () => {
  const ro = Object.assign(new Error("EROFS: read-only file system, open '/x/y'"), { code: "EROFS", syscall: "open", path: "/x/y" });
  assert.equal(await reportError(ro), 74);
  const full = Object.assign(new Error("ENOSPC"), { code: "ENOSPC", syscall: "write" });
  assert.equal(await reportError(full), 74);
  const log = join(tmpdir(), `ik-crash-${runtime.pid()}.log`);
  try {
    const read = Object.assign(new Error("ENOENT: no such file or directory, open '/nope'"), { code: "ENOENT", syscall: "open", path: "/nope" });
    assert.equal(await reportError(read), 70);
  } finally {
    rmSync(log, { force: true });
  }
});

test("writeWhole replaces only a file: a folder or a device at the path is a usage error (64) and is left as it was; a folder in the way of the part is 74", async () => {
  const dir = await mkdtemp(join(tmpdir(), "ik-write-whole-"));
  try {
    const code = async (f: () => Promise<unknown>) => f().then(() => 0, (e) => (e instanceof IkError ? e.code : -1));
    assert.equal(await code(() => writeWhole(dir, "x")), 64);
    assert.ok(statSync(dir).isDirectory(), "the folder is left");
    assert.equal(await code(() => writeWhole("/dev/null", "x")), 64);
    assert.ok(!statSync("/dev/null").isFile(), "the device is left");
    const f = join(dir, "r.md");
    mkdirSync(`${f}.part`);
    const e = await writeWhole(f, "x").then(() => null, (x) => x as IkError);
    assert.equal(e?.code, 74);
    assert.match(`${e?.where}: ${e?.message}`, /r\.md: cannot write \(EISDIR: is a directory\)/);
    await writeWhole(join(dir, "ok.md"), "fine");
    assert.equal(readFileSync(join(dir, "ok.md"), "utf8"), "fine");
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("the GPU lock path is a folder: a usage error naming --gpu-lock (64), not a crash", async () => {
  const dir = await mkdtemp(join(tmpdir(), "ik-lock-dir-"));
  try {
    const e = await acquireGpuLock(dir, { pid: 4242, command: "ik test", env: {}, pidAlive: () => true }).then(() => null, (x) => x as IkError);
    assert.ok(e instanceof IkError, String(e));
    assert.equal(e.code, 64);
    assert.match(e.message, /is a folder, not a lock file/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
