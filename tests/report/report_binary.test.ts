/**
 * `ik report` end to end through dist/ik on real records (`ik mock` + `ik bench serve`, single and
 * load mode, and a 2-engine `ik bench rounds`), loopback only. Bun only (heavy; CONTRACTS.md "CI
 * time"), ~25 s. The HTML pages are loaded in Debian's chromium (headless, no network, virtual
 * time): the page's own marker must say every chart drew, and every chart must hold the points
 * its spec has. Without chromium those checks are skipped, saying why.
 * - Markdown of a single-mode record: the per-bucket table shows the record's own medians and
 *   CIs; the CDF table counts the ok rows; the limitations list what the record says is missing.
 * - A capacity record: the curve with the SLO line and N* marked; a store root; a rounds dir.
 * - Refusals: a changed artifact (65), a path that is nothing (65), --html with --out (64).
 * - Negative controls: a chart with no point turns the marker to "error"; hostile text injects nothing.
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { type IkProcess, ikBin, runIk, startArgv } from "../_helpers/ik.ts";
import { runtime } from "../../lib/runtime/mod.ts";
import { renderHtml } from "../../lib/report/html/mod.ts";
import { withCi } from "../../lib/report/document/mod.ts";

const BUN = runtime.name === "bun";
const CHROMIUM = (spawnSync("sh", ["-c", "command -v chromium || command -v chromium-browser"], { encoding: "utf8" }).stdout ?? "").trim().split("\n")[0] || null;
const NO_CHROMIUM = CHROMIUM ? false : "chromium is not installed (apt-get install -y chromium; .ci/run installs it)";

let dir: string, runs: string;
const mocks: IkProcess[] = [];
const ids: Record<string, string> = {};

async function mock(args: string[]): Promise<string> {
  const m = startArgv([ikBin()], ["mock", "--port", "0", ...args]);
  mocks.push(m);
  return (await m.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/))[1];
}

const ik = (args: string[], timeoutMs = 60_000) => runIk(args, { env: { IK_RUNS_DIR: runs }, timeoutMs, cwd: dir });

/** Loads a page in headless chromium and returns the DOM after its scripts ran. */
function dumpDom(file: string): Promise<string> {
  return new Promise((ok, fail) => {
    const profile = join(dir, `profile-${Math.random().toString(36).slice(2)}`);
    const child = spawn(CHROMIUM!, ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
      "--no-first-run", `--user-data-dir=${profile}`, "--virtual-time-budget=10000", "--dump-dom", `file://${file}`], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout!.on("data", (d) => (out += d));
    const t = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("close", (code) => {
      clearTimeout(t);
      code === 0 ? ok(out) : fail(new Error(`chromium exited ${code}`));
    });
  });
}

/** The marker, and per figure: its drawn flag, its expected points, the svg's points and its circles. */
function inspect(dom: string) {
  const marker = dom.match(/<html[^>]*\sdata-rendered="([a-z]+)"/)?.[1] ?? null;
  const figures = [...dom.matchAll(/<figure class="chart"[^>]*>[\s\S]*?<\/figure>/g)].map((m) => {
    const f = m[0];
    return {
      kind: f.match(/data-kind="(\w+)"/)?.[1],
      drawn: f.match(/data-drawn="(\w+)"/)?.[1] ?? null,
      expected: Number(f.match(/data-expected-points="(\d+)"/)?.[1]),
      points: Number(f.match(/<svg[^>]*data-points="(\d+)"/)?.[1] ?? -1),
      circles: (f.match(/<circle[^>]*class="pt"/g) ?? []).length,
      slo: /class="slo"/.test(f),
      nstar: /class="nstar"/.test(f),
    };
  });
  return { marker, figures };
}

before(async () => {
  if (!BUN) return;
  dir = await mkdtemp(join(tmpdir(), "ik-report-"));
  runs = join(dir, "runs");
  const base = await mock(["--tpot-ms", "5"]);
  const single = await ik(["bench", "serve", "--base-url", base, "--model", "mock-model", "--rounds", "2", "--max-tokens", "8", "--warmup", "0", "--buckets", "very_short,short", "--json"]);
  assert.equal(single.code, 0, single.stderr);
  ids.single = JSON.parse(single.stdout).evidence_id;
  const load = await ik(["bench", "serve", "--base-url", base, "--model", "mock-model", "--mode", "load", "--concurrency", "1,2,4", "--duration-s", "1.5", "--max-tokens", "8",
    "--warmup", "0", "--slo-ttft-p95-ms", "200", "--gpu-price-usd-h", "2", "--json"]);
  assert.equal(load.code, 0, load.stderr);
  ids.capacity = JSON.parse(load.stdout).evidence_id;
  const ports = [18731 + Math.floor(Math.random() * 500), 19331 + Math.floor(Math.random() * 500)];
  await writeFile(join(dir, "m.json"), JSON.stringify({
    engines: ports.map((port, i) => ({ label: `e${i}`, name: "vllm", launch: [ikBin(), "mock", "--port", String(port), "--tpot-ms", String(5 + i)], port })),
  }));
  const rounds = await ik(["bench", "rounds", join(dir, "m.json"), "--rounds", "2", "--warmup", "0", "--serve-args", "--max-tokens 8 --warmup 0 --buckets very_short", "--gpu-lock", join(dir, "lock")], 120_000);
  assert.equal(rounds.code, 0, rounds.stderr);
});

after(async () => {
  await Promise.all(mocks.map((m) => m.stop()));
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("ik report (dist/ik)", { skip: BUN ? false : "Bun only (heavy end-to-end; CONTRACTS.md CI time)" }, () => {
  test("a single-mode record as Markdown: the record's medians and CIs, the CDF counts, the limitations", async () => {
    const r = await ik(["report", ids.single]);
    assert.equal(r.code, 0, r.stderr);
    const rec = JSON.parse(await readFile(join(runs, ids.single, "evidence.json"), "utf8"));
    const rows = (await readFile(join(runs, ids.single, "requests.jsonl"), "utf8")).trim().split("\n").map((l) => JSON.parse(l));
    for (const b of ["very_short", "short", "all"]) {
      const t = rec.data.buckets[b].ttft_ms;
      const cell = withCi(t.median, t.ci95_median).replace(/[[\]]/g, "\\$&");
      assert.ok(r.stdout.includes(`| ${b} | ${rec.data.buckets[b].n_requests} | 0 | ${cell} |`), `${b}: ${cell}\n${r.stdout}`);
      const n = rows.filter((x) => x.ok && (b === "all" || x.bucket === b)).length;
      assert.match(r.stdout, new RegExp(`\\n\\| ${b} \\| ${n} \\| [\\d.]+ \\|`));
    }
    assert.match(r.stdout, /### TTFT CDF\n/);
    assert.match(r.stdout, /### Limitations\n\n- missing: gpu identity/);
  });

  test("a capacity record: the curve with the SLO line and N*; the HTML page draws every chart in chromium", { skip: NO_CHROMIUM }, async () => {
    const md = await ik(["report", ids.capacity]);
    assert.equal(md.code, 0, md.stderr);
    const cap = JSON.parse(await readFile(join(runs, ids.capacity, "evidence.json"), "utf8"));
    assert.match(md.stdout, /SLO TTFT p95 \\<= 200 ms; N\\\* = c\d at /);
    // The grid's top held the SLO here: a lower bound, "≥" (c8ea842).
    assert.match(md.stdout, new RegExp(`- \\*\\*N\\\\\\*:\\*\\* ${cap.data.n_star_lower_bound ? "≥ " : ""}${cap.data.n_star} `));
    const file = join(dir, "cap.html");
    const r = await ik(["report", ids.capacity, "--html", file]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^wrote .*cap\.html \(HTML, 2 chart\(s\)\)/);
    const { marker, figures } = inspect(await dumpDom(file));
    assert.equal(marker, "ok");
    assert.deepEqual(figures.map((f) => f.kind), ["curve", "cdf"]);
    for (const f of figures) {
      assert.equal(f.drawn, "ok");
      assert.ok(f.expected > 0 && f.points === f.expected && f.circles === f.expected, JSON.stringify(f));
    }
    assert.equal(figures[0].expected, 3);
    assert.ok(figures[0].slo && figures[0].nstar, JSON.stringify(figures[0]));
  });

  test("a rounds dir and a store root render, and their pages draw", { skip: NO_CHROMIUM }, async () => {
    const md = await ik(["report", dir]);
    assert.equal(md.code, 0, md.stderr);
    assert.match(md.stdout, /## bench rounds: single mode, 2 rounds, 2 engines/);
    // Two rounds: the median has no interval (a t interval with one degree of freedom is not
    // given); the paired ratio keeps its own.
    assert.match(md.stdout, /\| tpot_ms \| e1 \| [\d.]+ ms \| 2 \| 1\.[12]\d* \\\[/);
    const store = await ik(["report", runs, "--html", join(dir, "store.html")]);
    assert.equal(store.code, 0, store.stderr);
    const storeMd = await ik(["report", runs]);
    assert.ok(storeMd.stdout.includes(ids.single) && storeMd.stdout.includes(ids.capacity));
    const rr = await ik(["report", join(dir, "rounds"), "--html", join(dir, "rounds.html")]);
    assert.equal(rr.code, 0, rr.stderr);
    for (const f of ["store.html", "rounds.html"]) {
      const got = inspect(await dumpDom(join(dir, f)));
      assert.equal(got.marker, "ok", f);
      assert.ok(got.figures.length > 0 && got.figures.every((x) => x.drawn === "ok" && x.points === x.expected && x.points > 0), JSON.stringify(got.figures));
    }
  });

  test("negative controls: a chart with no point sets the marker to error; hostile text injects nothing", { skip: NO_CHROMIUM }, async () => {
    const hostile = "<img src=x onerror=\"document.documentElement.setAttribute('data-pwned','1')\"></script><script>document.documentElement.setAttribute('data-pwned','2')</script>";
    const empty = renderHtml({ title: hostile, blocks: [
      { kind: "chart", chart: { kind: "curve", title: hostile, x: { label: hostile }, y: { label: "y" }, series: [{ name: hostile, points: [{ x: 1, y: 1, label: hostile }] }] } },
      { kind: "chart", chart: { kind: "cdf", title: "t", x: { label: "x" }, y: { label: "y" }, series: [{ name: "none", points: [] }] } },
    ] }, hostile);
    await writeFile(join(dir, "bad.html"), empty);
    const dom = await dumpDom(join(dir, "bad.html"));
    const { marker, figures } = inspect(dom);
    assert.equal(marker, "error");
    assert.deepEqual(figures.map((f) => f.drawn), ["ok", "error"]);
    assert.doesNotMatch(dom, /<html[^>]*data-pwned/);
    assert.doesNotMatch(dom, /<img/);
  });

  test("refusals: a changed artifact (65), nothing there (65), --html with --out (64); one line each", async () => {
    const copy = join(dir, "tampered");
    await cp(join(runs, ids.single), join(copy, ids.single), { recursive: true });
    await writeFile(join(copy, ids.single, "requests.jsonl"), "{}\n");
    const checks: [string[], number, RegExp][] = [
      [["report", join(copy, ids.single)], 65, /requests\.jsonl' \(requests\) changed/],
      [["report", join(dir, "no-such")], 65, /no such file, directory or evidence id/],
      [["report", ids.single, "--html", "a.html", "--out", "a.md"], 64, /^ik: --out: /],
    ];
    for (const [args, code, re] of checks) {
      const r = await ik(args);
      assert.equal(r.code, code, r.stderr);
      assert.match(r.stderr, re);
      assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
    }
  });
});
