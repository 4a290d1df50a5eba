/**
 * The runtime shim on real Node, which the release's Node single executable runs on (aarch64 hosts with
 * 64 KB pages). Always runs with the system `node` (npm needs one); also with the Node the release embeds
 * when scripts/release.ts has cached it, and then as a single executable too.
 */
import assert from "node:assert/strict";
import { chmodSync, copyFileSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { runArgv } from "../_helpers/ik.ts";
import { bunBin, cachedNode, cachedPostject, onPath, ROOT, startLines } from "./_release_helpers.ts";

const T = { timeout: 90_000 };
const work = mkdtempSync(join(tmpdir(), "ik-node-rt-"));
const fixture = join(work, "node_serve.mjs");
const contract = join(work, "runtime_contract.test.mjs");
const bun = bunBin();
const nodes: { label: string; path: string }[] = [];
const sys = onPath("node");
if (sys) nodes.push({ label: "system node", path: sys });
const pinned = cachedNode();
if (pinned) nodes.push({ label: "release node", path: pinned });

async function bundle(entry: string, outfile: string): Promise<void> {
  const r = await runArgv([bun!], ["build", "--target=node", "--format=esm", entry, "--outfile", outfile], { timeoutMs: 60_000 });
  assert.equal(r.code, 0, `bun build ${entry}: ${r.stderr}`);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Drives the fixture through every serve behaviour ik relies on. */
async function exerciseServe(argv: string[], expectSelf: (self: string[]) => void): Promise<void> {
  const p = startLines([...argv, "a1", "--x"]);
  try {
    const info = JSON.parse((await p.line(/^info (.*)$/))[1]);
    assert.equal(info.name, "node");
    assert.match(info.version, /^\d+\.\d+\.\d+$/);
    assert.deepEqual(info.args, ["a1", "--x"]);
    expectSelf(info.selfArgv);
    const port = Number((await p.line(/^listening (\d+)$/))[1]);
    assert.ok(port > 0);
    const base = `http://127.0.0.1:${port}`;

    // A finite SSE stream arrives whole, with its headers.
    const fin = await fetch(`${base}/finite?n=5`);
    assert.equal(fin.status, 200);
    assert.equal(fin.headers.get("content-type"), "text/event-stream");
    const text = await fin.text();
    assert.equal(text.match(/^data: /gm)?.length, 6);
    assert.match(text, /data: \[DONE\]\n\n$/);

    // A streamed request body reaches the handler; status, headers and two set-cookies come back.
    const enc = new TextEncoder();
    const upload = new ReadableStream<Uint8Array>({
      start(ctl) {
        ctl.enqueue(enc.encode('{"model":"m",'));
        ctl.enqueue(enc.encode('"prompt":"héllo"}'));
        ctl.close();
      },
    });
    const echo = await fetch(`${base}/echo`, {
      method: "POST",
      body: upload,
      headers: { "content-type": "application/json" },
      // @ts-ignore: a streamed request body needs duplex in Node's and Deno's fetch
      duplex: "half",
    });
    assert.equal(echo.status, 201);
    assert.equal(echo.headers.get("x-method"), "POST");
    assert.equal(echo.headers.get("x-content-type"), "application/json");
    assert.deepEqual(echo.headers.getSetCookie(), ["a=1", "b=2"]);
    assert.equal(await echo.text(), '30:{"model":"m","prompt":"héllo"}');

    // A handler that throws is a 500, and the server lives on.
    const bad = await fetch(`${base}/throw`);
    assert.equal(bad.status, 500);
    await bad.text();
    assert.equal((await fetch(`${base}/nope`)).status, 404);

    // A client that leaves mid-stream: the handler's stream is cancelled and its request signal aborts.
    const ac = new AbortController();
    const gone = await fetch(`${base}/stream`, { signal: ac.signal });
    const r1 = gone.body!.getReader();
    assert.match(new TextDecoder().decode((await r1.read()).value), /^data: \{"i":0\}/);
    ac.abort();
    await r1.read().catch(() => {});
    let stats = { cancelled: 0, aborted: 0 };
    for (let i = 0; i < 50 && (stats.cancelled < 1 || stats.aborted < 1); i++) {
      await sleep(20);
      stats = await (await fetch(`${base}/stats`)).json();
    }
    assert.ok(stats.cancelled >= 1 && stats.aborted >= 1, `after the client left: ${JSON.stringify(stats)}`);

    // close() with a stream still open returns promptly, ends that stream, and leaves nothing running.
    const open = await fetch(`${base}/stream`);
    const r2 = open.body!.getReader();
    await r2.read();
    p.write("close\n");
    const closedMs = Number((await p.line(/^closed (\d+)$/, 10_000))[1]);
    assert.ok(closedMs < 3000, `close() took ${closedMs} ms with a stream open`);
    const drained = (async () => {
      for (;;) if ((await r2.read()).done) return "ended";
    })().catch(() => "errored");
    assert.ok(["ended", "errored"].includes(await drained));
    const end = await p.ended(5000);
    assert.ok(end !== null, "the process ends by itself after close(): no timer or socket left behind");
    assert.equal(end!.code, 0, p.stderr());
    await assert.rejects(fetch(`${base}/finite`));
  } finally {
    p.kill();
  }
}

describe("runtime shim on Node", () => {
  before(async () => {
    if (!bun) return;
    await bundle(join(ROOT, "tests", "release", "_fixtures", "node_serve.ts"), fixture);
    await bundle(join(ROOT, "tests", "runtime", "runtime_contract.test.ts"), contract);
  }, T);
  after(() => rmSync(work, { recursive: true, force: true }));

  test("a node binary is found to test with", { skip: bun ? false : "node_modules/.bin/bun is missing (run npm ci)" }, () => {
    assert.ok(nodes.length > 0, "no `node` on PATH");
  });

  for (const n of nodes) {
    test(`serve on ${n.label} (${n.path}): port 0, streams, bodies, errors, client abort, close with a stream open`, {
      ...T,
      skip: bun ? false : "node_modules/.bin/bun is missing",
    }, async () => {
      await exerciseServe([n.path, fixture], (self) => {
        assert.equal(self[0], realpathSync(n.path));
        assert.equal(self[self.length - 1], fixture, "a script's selfArgv ends with the script");
      });
    });

    test(`the runtime contract suite (tests/runtime/runtime_contract.test.ts) passes on ${n.label}`, {
      ...T,
      skip: bun ? false : "node_modules/.bin/bun is missing",
    }, async () => {
      const r = await runArgv([n.path, "--test", "--test-reporter=spec", contract], [], { timeoutMs: 80_000 });
      assert.equal(r.code, 0, `node --test failed:\n${r.stdout.slice(-3000)}\n${r.stderr.slice(-1500)}`);
      assert.match(r.stdout, /runtime shim on node/);
      assert.doesNotMatch(r.stdout, /^\s*ℹ fail [1-9]/m);
    });
  }

  const postject = cachedPostject();
  test("as a Node single executable: selfArgv is the executable alone, args follow it", {
    ...T,
    skip: !bun ? "node_modules/.bin/bun is missing" : !pinned || !postject
      ? "the release's Node is not cached yet (npm run release, or bun scripts/release.ts --host-node-only)"
      : false,
  }, async () => {
    const exe = join(work, "ik-fixture-sea");
    const blob = join(work, "fixture.blob");
    const config = join(work, "sea.json");
    writeFileSync(
      config,
      JSON.stringify({ main: fixture, mainFormat: "module", output: blob, disableExperimentalSEAWarning: true }),
    );
    let r = await runArgv([pinned!], ["--experimental-sea-config", config], { timeoutMs: 60_000, cwd: work });
    assert.equal(r.code, 0, r.stderr);
    copyFileSync(pinned!, exe);
    chmodSync(exe, 0o755);
    r = await runArgv([pinned!], [join(ROOT, "scripts", "sea_inject.cjs"), postject!, exe, blob], { timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr);
    await exerciseServe([exe], (self) => assert.deepEqual(self, [realpathSync(exe)]));
  });
});
