/**
 * `ik mock` as a process (the compiled binary): the listening line, startup logs that reflect
 * the flags, startup and ready delays, --exit-after-s, --spawn-child and process-group kills,
 * --request-log, signals, and one-line usage errors.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { spawn } from "node:child_process";
import net from "node:net";
import process from "node:process";
import { describe, it } from "node:test";
import { ikBin, runIk, startArgv } from "../_helpers/ik.ts";
import { chatBody, fixture, LISTENING, rawRequest, startMock } from "./_helpers.ts";

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Whether a process still runs: a zombie (state Z: dead, not yet reaped, as an orphan is when the
 * test runner became a child subreaper through ik's engine code in another test file) is not.
 */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

async function until(cond: () => boolean, timeoutMs: number): Promise<boolean> {
  const end = performance.now() + timeoutMs;
  while (performance.now() < end) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return cond();
}

describe("ik mock process", () => {
  it("prints exactly one listening line on stderr, binds 127.0.0.1, exits 130 on SIGINT", async () => {
    const m = await startMock(["--engine", "sglang"]);
    const lines = m.proc.stderr().split("\n").filter((l) => LISTENING.test(l));
    assert.equal(lines.length, 1);
    assert.match(lines[0], /^ik mock: listening on http:\/\/127\.0\.0\.1:\d+ /);
    assert.equal((await rawRequest(m.port, "GET", "/v1/models")).status, 200);
    assert.equal(m.proc.stdout(), "");
    const r = await m.proc.stop("SIGINT");
    assert.equal(r.code, 130);
  });

  it("--startup-log: each engine's format, resolved config from the flags", async () => {
    const flags = ["--max-batch", "7", "--max-model-len", "4096", "--kv-tokens", "50000", "--seed", "3"];
    const expect: Record<string, RegExp[]> = {
      vllm: [
        /^\(APIServer pid=\d+\) INFO \d\d-\d\d \d\d:\d\d:\d\d \[utils\.py:\d+\] non-default args: \{.*'max_model_len': 4096, 'max_num_seqs': 7, 'seed': 3/m,
        /Using max model len 4096$/m,
        /GPU KV cache size: 50,000 tokens$/m,
        /Starting vLLM API server 0 on http:\/\/127\.0\.0\.1:\d+$/m,
      ],
      sglang: [
        /^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] server_args=ServerArgs\(.*max_running_requests=7.*random_seed=3/m,
        /^\[[^\]]* TP0\] max_total_num_tokens=50000, .*max_running_requests=7, context_len=4096/m,
        /Uvicorn running on http:\/\/127\.0\.0\.1:\d+/m,
        /The server is fired up and ready to roll!$/m,
      ],
      llamacpp: [
        /^llama_context: n_seq_max {5}= 7$/m,
        /^llama_context: n_ctx_per_seq = 4096$/m,
        /^srv {10}init: initializing slots, n_slots = 7$/m,
        /^slot {9}init: id {2}6 \| task -1 \| new slot, n_ctx = 4096$/m,
        /^main: server is listening on http:\/\/127\.0\.0\.1:\d+$/m,
      ],
      trtllm: [
        /^\[TensorRT-LLM\] TensorRT-LLM version: /m,
        /^\[\d\d\/\d\d\/\d{4}-\d\d:\d\d:\d\d\] \[TRT-LLM\] \[I\] max_seq_len=4096, max_num_requests=7, max_num_tokens=8192, max_batch_size=7$/m,
        /^INFO: {5}Uvicorn running on http:\/\/127\.0\.0\.1:\d+/m,
      ],
    };
    for (const [engine, patterns] of Object.entries(expect)) {
      const m = await startMock(["--startup-log", engine, ...flags]);
      const err = m.proc.stderr();
      await m.stop();
      for (const p of patterns) assert.match(err, p, `${engine}: ${p}`);
      // Line prefixes look like the engine's own transcript.
      const prefix = (l: string) => l.replace(/\d/g, "0").slice(0, 12);
      const want = new Set(fixture(`${engine}/startup.log`).split("\n").map(prefix));
      const ours = err.split("\n").filter((l) => l && !l.startsWith("ik mock:"));
      assert.ok(
        ours.filter((l) => want.has(prefix(l))).length >= ours.length * 0.6,
        `${engine} log lines resemble the transcript`,
      );
    }
  });

  it("--startup-delay-s: connections are refused until it listens", async () => {
    const port = await freePort();
    const t0 = performance.now();
    const proc = startArgv([ikBin()], ["mock", "--port", String(port), "--startup-delay-s", "0.6"]);
    try {
      await new Promise((r) => setTimeout(r, 150));
      const early = await rawRequest(port, "GET", "/health", undefined, 2000);
      assert.equal(early.status, 0);
      assert.equal(early.socketError, "ECONNREFUSED");
      await proc.waitFor(LISTENING, 10_000);
      assert.ok(performance.now() - t0 >= 600);
      assert.equal((await rawRequest(port, "GET", "/health")).status, 200);
    } finally {
      await proc.stop();
    }
  });

  it("--ready-delay-s: listens at once, /ready and /health answer 503 until the delay passes", async () => {
    const m = await startMock(["--engine", "llamacpp", "--ready-delay-s", "0.5"]);
    try {
      assert.equal((await rawRequest(m.port, "GET", "/ready")).status, 503);
      const h = await rawRequest(m.port, "GET", "/health");
      assert.equal(h.status, 503);
      assert.equal(JSON.parse(h.body).error.message, "Loading model");
      await new Promise((r) => setTimeout(r, 600));
      const ready = await rawRequest(m.port, "GET", "/ready");
      assert.deepEqual([ready.status, JSON.parse(ready.body)], [200, { ready: true }]);
      assert.equal((await rawRequest(m.port, "GET", "/health")).status, 200);
    } finally {
      await m.stop();
    }
  });

  it("--exit-after-s exits with status 1", async () => {
    const r = await runIk(["mock", "--port", "0", "--exit-after-s", "0.3"], { timeoutMs: 10_000 });
    assert.equal(r.code, 1);
    assert.match(r.stderr, LISTENING);
  });

  it("--spawn-child: the child sits in the mock's own group, so killing the group kills it", async () => {
    const child = spawn(ikBin(), ["mock", "--port", "0", "--spawn-child"], {
      detached: true,
      stdio: ["ignore", "ignore", "pipe"],
    });
    let err = "";
    child.stderr!.on("data", (d) => (err += d));
    try {
      assert.ok(await until(() => LISTENING.test(err), 10_000), "listening");
      const pid = Number(err.match(/^ik mock: child pid (\d+)$/m)?.[1]);
      assert.ok(pid > 0 && alive(pid));
      process.kill(-child.pid!, "SIGKILL");
      assert.ok(await until(() => !alive(pid), 5000), "the child died with its group");
    } finally {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch { /* gone */ }
    }
  });

  it("--spawn-child: a plain SIGTERM to the mock also ends the child", async () => {
    const m = await startMock(["--spawn-child"]);
    const pid = Number(m.proc.stderr().match(/^ik mock: child pid (\d+)$/m)?.[1]);
    assert.ok(alive(pid));
    assert.equal((await m.stop()).code, 130);
    assert.ok(await until(() => !alive(pid), 5000));
  });

  it("--request-log: one stdout line per finished request, in MOCK.md's exact format", async () => {
    const m = await startMock([
      "--request-log",
      "--ttft-ms",
      "1",
      "--tpot-ms",
      "1",
      "--spec-depth",
      "2",
      "--spec-accept",
      "0.5",
    ]);
    try {
      const wallBefore = Date.now(); // the system clock: another process's axis starts from it
      await rawRequest(m.port, "POST", "/v1/chat/completions", chatBody("one two three", { max_tokens: 9 }));
      await rawRequest(m.port, "POST", "/v1/completions", {
        model: "mock-model",
        prompt: "a b",
        max_tokens: 4,
        stream: false,
      });
      const wallAfter = Date.now() + 1;
      await new Promise((r) => setTimeout(r, 50));
      const lines = m.proc.stdout().trim().split("\n");
      assert.equal(lines.length, 2);
      const re =
        /^ik-request serial=(\d+) prompt=(\d+) cached=0 gen=(\d+) acc=(\d+) prop=(\d+) first_ms=(\d+\.\d{3}) last_ms=(\d+\.\d{3}) recv_wall_ms=(\d+\.\d{3})$/;
      const parsed = lines.map((l) => l.match(re)?.slice(1).map(Number));
      assert.ok(parsed.every(Boolean), lines.join(" | "));
      const [[s1, p1, g1, a1, r1, f1, l1, w1], [s2, p2, g2, , , f2, l2, w2]] = parsed as number[][];
      assert.deepEqual([s1, p1, g1, s2, p2, g2], [1, 3 + 4 + 3, 9, 2, 2, 4]);
      assert.ok(r1 > 0 && r1 % 2 === 0 && a1 <= r1, `acc=${a1} prop=${r1}`);
      assert.ok(f1 >= 1 && l1 > f1 && l1 < 1000, `first_ms=${f1} last_ms=${l1}`);
      // A whole answer has one write: first = last.
      assert.ok(f2 === l2 && f2 >= 1, `whole: first_ms=${f2} last_ms=${l2}`);
      // recv_wall_ms is wall-clock epoch ms (another process, so allow clock-origin slack).
      for (const w of [w1, w2]) {
        assert.ok(w > wallBefore - 50 && w < wallAfter + 50, `${w} in [${wallBefore}, ${wallAfter}]`);
      }
      assert.ok(w2 > w1);
    } finally {
      await m.stop();
    }
  });

  it("--parent-pid: the mock exits (status 0) within 1.5 s once that process is gone", async () => {
    const parent = spawn("sleep", ["30"], { stdio: "ignore" });
    try {
      const m = await startMock(["--parent-pid", String(parent.pid)]);
      await new Promise((r) => setTimeout(r, 600));
      assert.equal(
        (await rawRequest(m.port, "GET", "/health", undefined, 3000)).status,
        200,
        "alive while the parent is",
      );
      const t0 = performance.now();
      parent.kill("SIGKILL");
      const took = await Promise.race([
        m.proc.exited.then(() => performance.now() - t0),
        new Promise<number>((r) => setTimeout(() => r(Infinity), 5000)),
      ]);
      assert.ok(took < 1500, `exited ${took.toFixed(0)} ms after the parent died`);
      const r = await m.stop();
      assert.equal(r.code, 0);
      assert.match(m.proc.stderr(), /--parent-pid \d+ is gone/);
    } finally {
      parent.kill("SIGKILL");
    }
  });

  it("bad flags: one line on stderr naming the flag, exit 64", async () => {
    const cases: [string[], RegExp][] = [
      [["--fault", "explode"], /--fault.*explode/],
      [["--fault", "stall:"], /--fault.*stall:/],
      [["--engine", "tgi"], /--engine/],
      [["--step-ms", "5"], /--step-ms.*--max-batch/],
      [["--spec-depth", "3"], /--spec-depth.*--spec-accept/],
      [["--tokens-per-event", "0"], /--tokens-per-event/],
      [["--metrics", "maybe"], /--metrics/],
      [["--host", ""], /--host.*empty/],
      [["--exit-after-s", "2147484"], /--exit-after-s.*2147483/],
      [["--startup-delay-s", "2147484"], /--startup-delay-s.*2147483/],
      [["--ready-delay-s", "3e9"], /--ready-delay-s.*2147483/],
      [["--fault", "stall:2147484"], /--fault.*stall:2147484.*2147483/],
      [["--fault", "slow-headers:2147484@2"], /--fault.*slow-headers:2147484@2.*2147483/],
      [["--ttft-ms", "2147483648"], /--ttft-ms.*2147483647/],
      [["--tpot-ms", "1e10"], /--tpot-ms.*2147483647/],
      [["--jitter-ms", "2147483648"], /--jitter-ms.*2147483647/],
      [["--max-batch", "2", "--step-ms", "2147483648"], /--step-ms.*2147483647/],
      [["--fault", "usage-mismatch:0"], /--fault.*usage-mismatch:0/],
      [["--max-batch", "2", "--ttft-ms", "5"], /--ttft-ms.*--max-batch/],
      [["--tpot-ms", "5", "--max-batch", "2"], /--tpot-ms.*--max-batch/],
      [["--max-batch", "2", "--tokens-per-event", "3"], /--tokens-per-event.*--max-batch/],
      [["--max-batch", "2", "--spec-depth", "2", "--spec-accept", "0.5"], /--spec-depth.*--max-batch/],
      [["--max-batch", "2", "--spec-accept", "0.5"], /--spec-accept.*--max-batch/],
    ];
    for (const [args, re] of cases) {
      const r = await runIk(["mock", "--port", "0", ...args], { timeoutMs: 10_000 });
      assert.equal(r.code, 64, `${args.join(" ")}: ${r.stderr}`);
      const lines = r.stderr.trim().split("\n");
      assert.equal(lines.length, 1, r.stderr);
      assert.match(lines[0], /^ik: /);
      assert.match(lines[0], re);
    }
  });
});
