/** The runtime shim's contract, run on whichever runtime executes this file (npm test runs both). */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { runtime } from "../../lib/runtime/mod.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !/\) [ZX] /.test(stat); // a zombie is dead for our purposes
  } catch {
    return false;
  }
}

describe(`runtime shim on ${runtime.name}`, () => {
  test("names the runtime it runs on", () => {
    const g = globalThis as unknown as { Bun?: unknown; Deno?: unknown };
    assert.equal(runtime.name, g.Bun ? "bun" : g.Deno ? "deno" : "node");
    assert.match(runtime.version, /^\d+\.\d+/);
  });

  test("serve on port 0 binds 127.0.0.1 on a real free port", async () => {
    const s = await runtime.serve((req) => new Response(`hello ${new URL(req.url).pathname}`), { port: 0 });
    try {
      assert.ok(s.port > 0);
      assert.equal(s.hostname, "127.0.0.1");
      const r = await fetch(`http://127.0.0.1:${s.port}/x`);
      assert.equal(await r.text(), "hello /x");
    } finally {
      await s.close();
    }
    await assert.rejects(fetch(`http://127.0.0.1:${s.port}/x`));
  });

  test("streams events as they are written and closes with a stream still open", async () => {
    const enc = new TextEncoder();
    const s = await runtime.serve(() => {
      let i = 0;
      let timer: ReturnType<typeof setInterval> | undefined;
      const body = new ReadableStream<Uint8Array>({
        start(ctl) {
          timer = setInterval(() => ctl.enqueue(enc.encode(`data: ${i++}\n\n`)), 20);
        },
        cancel() {
          clearInterval(timer);
        },
      });
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    }, { port: 0 });
    const r = await fetch(`http://127.0.0.1:${s.port}/`);
    const reader = r.body!.getReader();
    const t0 = performance.now();
    const first = await reader.read();
    assert.match(new TextDecoder().decode(first.value), /^data: 0/);
    assert.ok(performance.now() - t0 < 1000, "first event arrives before the stream ends");
    const t1 = performance.now();
    await s.close();
    assert.ok(performance.now() - t1 < 3000, "close() does not wait for the open stream");
    await reader.read().then(async (x) => {
      // the stream either errors or ends soon after close; drain to be sure it does not hang
      while (!x.done) x = await reader.read();
    }).catch(() => {});
  });

  test("abort signal closes the server", async () => {
    const ac = new AbortController();
    const s = await runtime.serve(() => new Response("ok"), { port: 0, signal: ac.signal });
    assert.equal(await (await fetch(`http://127.0.0.1:${s.port}/`)).text(), "ok");
    ac.abort();
    await sleep(100);
    await assert.rejects(fetch(`http://127.0.0.1:${s.port}/`));
  });

  test("spawn starts a new process group and killGroup kills grandchildren too", async () => {
    const dir = await mkdtemp(join(tmpdir(), "ik-rt-"));
    const log = join(dir, "child.log");
    const g = runtime.spawn(["bash", "-c", "sleep 300 & echo grandchild $!; echo ready; wait"], { logFile: log });
    let text = "";
    for (let i = 0; i < 100 && !text.includes("ready"); i++) {
      await sleep(20);
      text = await runtime.files.readText(log).catch(() => "");
    }
    const grandchild = Number(text.match(/grandchild (\d+)/)?.[1]);
    assert.ok(grandchild > 0, `grandchild pid in ${text}`);
    const stat = readFileSync(`/proc/${g.pid}/stat`, "utf8").split(") ")[1].split(" ");
    assert.equal(Number(stat[2]), g.pid, "the child leads its own process group");
    g.killGroup("SIGTERM");
    const st = await g.exited;
    assert.ok(st.signal === "SIGTERM" || st.code === 143, JSON.stringify(st));
    for (let i = 0; i < 50 && alive(grandchild); i++) await sleep(20);
    assert.equal(alive(grandchild), false, "grandchild died with the group");
  });

  test("spawn reports the exit status and passes env and cwd", async () => {
    const dir = await mkdtemp(join(tmpdir(), "ik-rt-"));
    const log = join(dir, "out.log");
    const g = runtime.spawn(["bash", "-c", 'echo "$IK_T $(pwd)"; exit 3'], { env: { IK_T: "v1" }, cwd: dir, logFile: log });
    assert.deepEqual(await g.exited, { code: 3, signal: null });
    assert.equal((await runtime.files.readText(log)).trim(), `v1 ${dir}`);
  });

  test("files: write, append, rename, chmod, exists, remove", async () => {
    const dir = await mkdtemp(join(tmpdir(), "ik-rt-"));
    const a = join(dir, "sub", "a.txt");
    await runtime.files.mkdir(join(dir, "sub"));
    await runtime.files.writeText(a, "one\n", { mode: 0o600 });
    await runtime.files.appendText(a, "two\n");
    await runtime.files.chmod(a, 0o640);
    const b = join(dir, "b.txt");
    await runtime.files.rename(a, b);
    assert.equal(await runtime.files.exists(a), false);
    assert.equal(await runtime.files.readText(b), "one\ntwo\n");
    assert.deepEqual(await runtime.files.readBytes(b), new TextEncoder().encode("one\ntwo\n"));
    await runtime.files.remove(dir);
    assert.equal(await runtime.files.exists(dir), false);
  });

  test("env, args, cwd, pid, cpu time and terminals", () => {
    assert.equal(typeof runtime.env("PATH"), "string");
    assert.equal(runtime.env("IK_SURELY_UNSET_VAR"), undefined);
    assert.ok(Array.isArray(runtime.args()));
    assert.ok(runtime.cwd().startsWith("/"));
    assert.ok(runtime.pid() > 0);
    const u = runtime.cpuUsage();
    assert.ok(u.userUs > 0 && u.systemUs >= 0);
    assert.equal(typeof runtime.isTerminal("stdout"), "boolean");
    assert.ok(runtime.selfArgv().length >= 1);
  });
});
