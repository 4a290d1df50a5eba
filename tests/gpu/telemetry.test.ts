/**
 * GPU telemetry: real nvidia-smi CSV and dcgm-exporter text (8×H100, [N/A]/[Not Supported]/[Unknown
 * Error] cells, MIG), the energy integral against known power traces on an injected clock (linear
 * ramp 100→300 W = 1800 J, a step, a bridged gap), the DCGM counter beside the integral, unreadable
 * sources as "not available" notes, the timer-driven sampler (first poll at once, skipped ticks, a
 * last poll on stop, no timer left behind) and energy per output token.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import {
  energyPerToken,
  type ExecFn,
  type GpuTelemetry,
  GpuTelemetrySampler,
  parseDcgmText,
  parseTelemetryCsv,
  TELEMETRY_QUERY,
  telemetryCell,
  type TelemetryFetch,
  type TelemetryTimers,
} from "../../lib/gpu/mod.ts";

const read = (name: string) =>
  readFileSync(fileURLToPath(new URL(`../testdata/gpu/${name}`, import.meta.url)), "utf8");

/** A clock the test moves by hand. */
function clock(start = 5000): { now: () => number; t: number } {
  const c = { t: start, now: () => c.t };
  return c;
}

/** An nvidia-smi that prints one row per GPU with the next power value of each trace (cells as strings). */
function traceExec(traces: string[][], calls: string[][] = []): ExecFn {
  let i = 0;
  return (argv) => {
    calls.push(argv);
    const k = Math.min(i++, traces[0].length - 1);
    const lines = traces.map((tr, g) =>
      `${g}, GPU-0000000${g}-aaaa-bbbb-cccc-dddddddddddd, ${tr[k]}, 50, 1024, 1980`
    );
    return Promise.resolve({ code: 0, stdout: lines.join("\n") + "\n" });
  };
}

/** Polls `n` times, `stepMs` apart on the manual clock, then stops. */
async function drive(
  s: GpuTelemetrySampler,
  c: { t: number },
  n: number,
  stepMs = 1000,
): Promise<GpuTelemetry> {
  for (let i = 0; i < n; i++) {
    if (i > 0) c.t += stepMs;
    assert.equal(await s.sampleOnce(), true, `poll ${i}`);
  }
  return s.stop();
}

test("nvidia-smi CSV: eight H100s, every field read", () => {
  const p = parseTelemetryCsv(read("nvidia_smi_h100x8.csv"));
  assert.equal(p.gpus.length, 8);
  assert.equal(p.badLines, 0);
  assert.deepEqual(p.gpus[0], {
    key: "GPU-22dbdd79-f55a-92a8-aa39-322198e72ed6",
    index: 0,
    uuid: "GPU-22dbdd79-f55a-92a8-aa39-322198e72ed6",
    name: null,
    powerW: 612.48,
    utilPct: 100,
    memoryUsedMib: 76543,
    smClockMhz: 1980,
    energyMj: null,
  });
  assert.deepEqual(p.gpus.map((g) => g.index), [0, 1, 2, 3, 4, 5, 6, 7]);
  assert.equal(p.gpus[5].smClockMhz, 1950);
  assert.deepEqual(TELEMETRY_QUERY, [
    "nvidia-smi",
    "--query-gpu=index,uuid,power.draw,utilization.gpu,memory.used,clocks.sm",
    "--format=csv,noheader,nounits",
  ]);
});

test("nvidia-smi CSV: [N/A], [Not Supported], [Unknown Error] and empty cells are null, never 0", () => {
  const p = parseTelemetryCsv(read("nvidia_smi_odd.csv"));
  assert.equal(p.gpus.length, 5);
  assert.equal(p.badLines, 1);
  assert.match(p.firstBad!, /Unable to determine the device handle/);
  const [na, ns, mig, err, empty] = p.gpus;
  assert.equal(na.powerW, null);
  assert.equal(na.powerRaw, "[N/A]");
  assert.equal(na.utilPct, 0); // a real 0 stays 0
  assert.equal(ns.smClockMhz, null);
  assert.equal(ns.powerW, 55.12);
  assert.equal(mig.utilPct, null); // MIG mode: utilization.gpu is [N/A]
  assert.equal(mig.powerW, 87.23);
  assert.deepEqual([err.powerW, err.utilPct, err.memoryUsedMib, err.smClockMhz], [null, null, null, null]);
  assert.equal(empty.uuid, null);
  assert.equal(empty.key, "index:4");
  assert.deepEqual([empty.powerW, empty.utilPct, empty.memoryUsedMib, empty.smClockMhz], [
    null,
    null,
    null,
    null,
  ]);
  for (
    const cell of [
      "[N/A]",
      "N/A",
      "[Not Supported]",
      "[Unknown Error]",
      "",
      "  ",
      "[GPU is lost]",
      "-1",
      "abc",
    ]
  ) {
    assert.equal(telemetryCell(cell), null, JSON.stringify(cell));
  }
  assert.equal(telemetryCell(" 312.45 W"), 312.45);
  assert.equal(telemetryCell("0"), 0);
});

test("linear ramp 100→300 W over 10 samples 1 s apart: 1800 J by trapezoid", async () => {
  const c = clock();
  const ramp = Array.from({ length: 10 }, (_, i) => (100 + (200 * i) / 9).toFixed(6));
  const calls: string[][] = [];
  const s = new GpuTelemetrySampler({
    source: { kind: "nvidia-smi", exec: traceExec([ramp], calls) },
    now: c.now,
  });
  const tel = await drive(s, c, 10);
  assert.equal(calls.length, 10);
  assert.deepEqual(calls[0], TELEMETRY_QUERY);
  assert.equal(tel.available, true);
  assert.equal(tel.note, null);
  assert.equal(tel.n, 10);
  assert.equal(tel.window_s, 9);
  const g = tel.gpus[0];
  assert.equal(g.energy_j, 1800);
  assert.equal(g.mean_power_w, 200);
  assert.equal(g.max_power_w, 300);
  assert.equal(g.energy_window_s, 9);
  assert.equal(g.mean_util_pct, 50);
  assert.equal(g.mean_sm_clock_mhz, 1980);
  assert.equal(g.max_memory_used_mib, 1024);
  assert.equal(g.energy_counter_j, null);
  assert.equal(tel.total.energy_j, 1800);
  assert.equal(tel.first_sample_ms, 5000);
  assert.equal(tel.last_sample_ms, 14000);
  assert.match(tel.definition, /trapezoid/);
  assert.match(tel.definition, /first and last power reading/);
});

test("a step trace and two GPUs: trapezoid per GPU, totals summed, peak of the per-poll sum", async () => {
  const c = clock();
  const step = ["100", "100", "100", "100", "100", "400", "400", "400", "400", "400"];
  const flat = Array(10).fill("50");
  const s = new GpuTelemetrySampler({
    source: { kind: "nvidia-smi", exec: traceExec([step, flat]) },
    now: c.now,
  });
  const tel = await drive(s, c, 10);
  // 4 s at 100 W + the step second (100+400)/2 + 4 s at 400 W; a rectangle rule would give 2100 or 2400.
  assert.equal(tel.gpus[0].energy_j, 2250);
  assert.equal(tel.gpus[0].mean_power_w, 250);
  assert.equal(tel.gpus[1].energy_j, 450);
  assert.equal(tel.total.gpus, 2);
  assert.equal(tel.total.energy_j, 2700);
  assert.equal(tel.total.mean_power_w, 300);
  assert.equal(tel.total.max_power_w, 450);
  assert.equal(tel.total.max_memory_used_mib, 2048);
  assert.equal(tel.total.mean_util_pct, 50);
});

test("uneven poll times: the integral uses the real gaps", async () => {
  const c = clock();
  const s = new GpuTelemetrySampler({
    source: { kind: "nvidia-smi", exec: traceExec([["100", "300", "300"]]) },
    now: c.now,
  });
  await s.sampleOnce();
  c.t += 500;
  await s.sampleOnce();
  c.t += 2000;
  await s.sampleOnce();
  const tel = await s.stop();
  assert.equal(tel.gpus[0].energy_j, 0.5 * 200 + 2 * 300);
  assert.equal(tel.window_s, 2.5);
});

test("onPower is told each GPU's power reading as it is read (ik's live metrics gauge)", async () => {
  const c = clock();
  const seen: [string, string, number][] = [];
  const s = new GpuTelemetrySampler({ source: { kind: "nvidia-smi", exec: traceExec([["100", "300"]]) }, now: c.now, onPower: (g, u, w) => seen.push([g, u, w]) });
  await s.sampleOnce();
  c.t += 500;
  await s.sampleOnce();
  await s.stop();
  const uuid = "GPU-00000000-aaaa-bbbb-cccc-dddddddddddd";
  assert.deepEqual(seen, [["0", uuid, 100], ["0", uuid, 300]]);
});

test("each poll is stamped at the midpoint of its request", async () => {
  const c = clock(1000);
  const exec: ExecFn = () => {
    c.t += 200; // nvidia-smi takes 200 ms
    return Promise.resolve({ code: 0, stdout: "0, GPU-a, 100, 0, 0, 0\n" });
  };
  const s = new GpuTelemetrySampler({ source: { kind: "nvidia-smi", exec }, now: c.now });
  await s.sampleOnce();
  c.t = 2000;
  await s.sampleOnce();
  const tel = await s.stop();
  assert.equal(tel.first_sample_ms, 1100);
  assert.equal(tel.last_sample_ms, 2100);
});

test("[N/A] power: a gap is bridged (not read as 0 W); power never readable gives energy_j null with a note", async () => {
  const c = clock();
  const gap = ["100", "[N/A]", "300"];
  const never = ["[N/A]", "[N/A]", "[N/A]"];
  const s = new GpuTelemetrySampler({
    source: { kind: "nvidia-smi", exec: traceExec([gap, never]) },
    now: c.now,
  });
  const tel = await drive(s, c, 3);
  const [g0, g1] = tel.gpus;
  assert.equal(g0.energy_j, 400); // (100+300)/2 · 2 s; reading [N/A] as 0 W would give 200
  assert.equal(g0.power_n, 2);
  assert.equal(g0.max_power_w, 300);
  assert.match(g0.note!, /unreadable in 1 of 3 polls \(\[N\/A\]\), 1 gap\(s\) bridged/);
  assert.equal(g1.energy_j, null);
  assert.equal(g1.mean_power_w, null);
  assert.equal(g1.max_power_w, null);
  assert.equal(g1.power_n, 0);
  assert.match(g1.note!, /power never readable \(\[N\/A\] in 3 polls\): energy_j null/);
  assert.equal(tel.total.energy_j, 400);
  assert.equal(tel.total.mean_power_w, 200);
  assert.match(tel.total.note!, /leave out GPU 1/);
  assert.match(tel.note!, /1 of 2 GPUs never had a power reading/);
});

test("one power reading: mean is that reading, energy_j null", async () => {
  const c = clock();
  const s = new GpuTelemetrySampler({
    source: { kind: "nvidia-smi", exec: traceExec([["250"]]) },
    now: c.now,
  });
  const tel = await drive(s, c, 1);
  assert.equal(tel.gpus[0].mean_power_w, 250);
  assert.equal(tel.gpus[0].energy_j, null);
  assert.match(tel.gpus[0].note!, /one power reading/);
  assert.equal(tel.total.energy_j, null);
  assert.equal(tel.total.mean_power_w, 250);
});

test("the gpus filter keeps only the named indices or UUIDs", async () => {
  const c = clock();
  const exec: ExecFn = () => Promise.resolve({ code: 0, stdout: read("nvidia_smi_h100x8.csv") });
  const s = new GpuTelemetrySampler({
    source: { kind: "nvidia-smi", exec },
    now: c.now,
    gpus: [0, "GPU-b60b817a-a091-c492-4211-92b276d697e6"],
  });
  const tel = await drive(s, c, 2);
  assert.deepEqual(tel.gpus.map((g) => g.index), [0, 7]);
  assert.equal(tel.total.energy_j, 612.48 + 595.25);
  const none = new GpuTelemetrySampler({ source: { kind: "nvidia-smi", exec }, now: c.now, gpus: [9] });
  await none.sampleOnce();
  const t2 = await none.stop();
  assert.equal(t2.available, false);
  assert.match(t2.note!, /no GPU matched 9/);
});

test("unreadable nvidia-smi: missing, failing, or no GPU rows → available false with a one-line note", async () => {
  const cases: [ExecFn, RegExp][] = [
    [
      () => Promise.reject(new Error("spawn nvidia-smi ENOENT")),
      /could not be run \(spawn nvidia-smi ENOENT\)/,
    ],
    [() => Promise.resolve({ code: null, stdout: "" }), /2 of 2 polls .*did not answer within \d+ ms \(killed\)/],
    [() => Promise.resolve({ code: 127, stdout: "" }), /could not be run \(not found\)/],
    [
      () =>
        Promise.resolve({
          code: 9,
          stdout:
            "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\nMake sure...\n",
        }),
      /exited 9: NVIDIA-SMI has failed because it couldn't communicate/,
    ],
    [
      () => Promise.resolve({ code: 0, stdout: "No devices were found\n" }),
      /no GPU in the answer \(No devices were found\)/,
    ],
  ];
  for (const [exec, want] of cases) {
    const s = new GpuTelemetrySampler({ source: { kind: "nvidia-smi", exec }, giveUpAfter: 2 });
    assert.equal(await s.sampleOnce(), false);
    await s.sampleOnce();
    const tel = await s.stop();
    assert.equal(tel.available, false);
    assert.equal(tel.n, 0);
    assert.match(tel.note!, /^not available: /);
    assert.match(tel.note!, want);
    assert.equal(tel.note!.includes("\n"), false);
    assert.equal(tel.total.energy_j, null);
    assert.deepEqual(tel.gpus, []);
    assert.equal(energyPerToken(tel, 1000, 10).joules_per_output_token, null);
  }
});

test("DCGM text: two H100s, labels read, blank sentinels ignored", () => {
  const p = parseDcgmText(read("dcgm_h100x2_t0.prom"));
  assert.equal(p.badLines, 0);
  assert.equal(p.gpus.length, 2);
  assert.deepEqual(p.gpus[0], {
    key: "GPU-22dbdd79-f55a-92a8-aa39-322198e72ed6",
    index: 0,
    uuid: "GPU-22dbdd79-f55a-92a8-aa39-322198e72ed6",
    name: "NVIDIA H100 80GB HBM3",
    powerW: 312.5,
    utilPct: 97,
    memoryUsedMib: 76543,
    smClockMhz: 1980,
    energyMj: 1234567890,
  });
  assert.equal(p.gpus[1].powerW, 98.25);
  assert.equal(p.gpus[1].memoryUsedMib, 1);
  const blank = parseDcgmText(
    'DCGM_FI_DEV_POWER_USAGE{gpu="3",UUID="GPU-x"} 140737488355328\nDCGM_FI_DEV_GPU_UTIL{gpu="3",UUID="GPU-x"} NaN\n',
  );
  assert.equal(blank.gpus[0].powerW, null);
  assert.equal(blank.gpus[0].utilPct, null);
  assert.equal(blank.gpus[0].powerRaw, "blank");
});

test("DCGM MIG: instances fold into their GPU; board power once, memory summed", () => {
  const g = parseDcgmText(read("dcgm_mig.prom")).gpus;
  assert.equal(g.length, 1);
  assert.equal(g[0].mig, true);
  assert.equal(g[0].powerW, 272.01); // not 544.02
  assert.equal(g[0].memoryUsedMib, 18432 + 16105);
  assert.equal(g[0].utilPct, null); // the exporter's blank
  assert.equal(g[0].smClockMhz, 1410);
});

test("DCGM: the energy counter delta (mJ → J) is reported beside the trapezoid integral", async () => {
  const c = clock();
  const pages = [read("dcgm_h100x2_t0.prom"), read("dcgm_h100x2_t10.prom")];
  const urls: string[] = [];
  let i = 0;
  const fetch: TelemetryFetch = (url) => {
    urls.push(url);
    return Promise.resolve({ status: 200, text: () => Promise.resolve(pages[Math.min(i++, 1)]) });
  };
  const s = new GpuTelemetrySampler({
    source: { kind: "dcgm", url: "http://gpu-node-07:9400/metrics", fetch },
    now: c.now,
  });
  const tel = await drive(s, c, 2, 10_000);
  assert.equal(tel.source, "dcgm");
  assert.deepEqual(urls, ["http://gpu-node-07:9400/metrics", "http://gpu-node-07:9400/metrics"]);
  const [g0, g1] = tel.gpus;
  assert.equal(g0.name, "NVIDIA H100 80GB HBM3");
  assert.equal(g0.energy_j, 4125); // (312.5 + 512.5) / 2 · 10 s
  assert.equal(g0.energy_counter_j, 4150); // 4 150 000 mJ
  assert.equal(g1.energy_j, 1000);
  assert.equal(g1.energy_counter_j, 1002);
  assert.equal(tel.total.energy_j, 5125);
  assert.equal(tel.total.energy_counter_j, 5152);
  assert.equal(tel.total.max_memory_used_mib, 77002);
  assert.equal(tel.total.mean_sm_clock_mhz, (1980 + 345) / 2);
});

test("DCGM: a counter that drops counts as a restart; stale repeated power is noted", async () => {
  const c = clock();
  const vals = [[100, 1000], [100, 3000], [100, 500], [100, 1500]];
  let i = 0;
  const fetch: TelemetryFetch = () => {
    const [p, e] = vals[Math.min(i++, vals.length - 1)];
    const text =
      `DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-a"} ${p}\nDCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="0",UUID="GPU-a"} ${e}\n`;
    return Promise.resolve({ status: 200, text: () => Promise.resolve(text) });
  };
  const s = new GpuTelemetrySampler({ source: { kind: "dcgm", url: "http://x/metrics", fetch }, now: c.now });
  const tel = await drive(s, c, 4);
  assert.equal(tel.gpus[0].energy_counter_j, (2000 + 500 + 1000) / 1000);
  assert.match(tel.gpus[0].note!, /energy counter dropped 1 time/);
  assert.match(tel.gpus[0].note!, /repeated the previous value in 3 of 3 polls/);
});

test("unreadable DCGM: refused, 404, not DCGM text, timeout → available false with a note", async () => {
  const refused: TelemetryFetch = () =>
    Promise.reject(new TypeError("fetch failed: connect ECONNREFUSED 127.0.0.1:9400"));
  const http = (status: number, body = ""): TelemetryFetch => () =>
    Promise.resolve({ status, text: () => Promise.resolve(body) });
  const hang: TelemetryFetch = (_u, { signal }) =>
    new Promise((_r, rej) =>
      signal.addEventListener("abort", () => rej(new Error("aborted")), { once: true })
    );
  const cases: [TelemetryFetch, RegExp][] = [
    [refused, /could not be read \(fetch failed: connect ECONNREFUSED/],
    [http(404, "404 page not found"), /answered HTTP 404/],
    [http(503), /2 of 2 polls .* failed \(last: .*HTTP 503\)/],
    [http(200, "# HELP up x\nup 1\n"), /no DCGM_FI_DEV_\* GPU metrics/],
    [hang, /timed out after 20 ms/],
  ];
  for (const [fetch, want] of cases) {
    const s = new GpuTelemetrySampler({
      source: { kind: "dcgm", url: "http://127.0.0.1:9400/metrics", fetch },
      timeoutMs: 20,
      giveUpAfter: 2,
    });
    await s.sampleOnce();
    await s.sampleOnce();
    const tel = await s.stop();
    assert.equal(tel.available, false, String(want));
    assert.match(tel.note!, /^not available: /);
    assert.match(tel.note!, want);
  }
});

/** Timers that fire only when the test advances the clock. */
class FakeTimers implements TelemetryTimers {
  t = 0;
  #id = 0;
  pending = new Map<number, { at: number; fn: () => void }>();
  now = () => this.t;
  setTimeout = (fn: () => void, ms: number) => {
    const id = ++this.#id;
    this.pending.set(id, { at: this.t + ms, fn });
    return id;
  };
  clearTimeout = (h: unknown) => {
    this.pending.delete(h as number);
  };
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    for (;;) {
      await flush();
      const due = [...this.pending.entries()].filter(([, p]) =>
        p.at <= end
      ).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.pending.delete(due[0]);
      this.t = Math.max(this.t, due[1].at);
      due[1].fn();
    }
    this.t = end;
    await flush();
  }
}

async function flush(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

test("start/stop on fake timers: first poll at once, one a second, a last poll on stop, no timer left", async () => {
  const ft = new FakeTimers();
  const ramp = Array.from({ length: 20 }, (_, i) => String(100 + 10 * i));
  const calls: string[][] = [];
  const s = new GpuTelemetrySampler({
    source: { kind: "nvidia-smi", exec: traceExec([ramp], calls) },
    timers: ft,
  });
  s.start();
  s.start(); // a second start does nothing
  await flush();
  assert.equal(s.size, 1);
  assert.equal(s.polling, true);
  await ft.advance(4500); // polls at 1, 2, 3, 4 s
  assert.equal(s.size, 5);
  const tel = await s.stop();
  assert.equal(s.polling, false);
  assert.equal(ft.pending.size, 0);
  assert.equal(tel.n, 6); // the last poll at 4.5 s
  assert.equal(tel.window_s, 4.5);
  assert.equal(tel.ended, "stop");
  // 100,110,…,140 at 0..4 s, then 150 at 4.5 s
  assert.equal(tel.gpus[0].energy_j, 480 + 72.5);
  assert.equal(await s.stop(), tel);
  assert.equal(await s.sampleOnce(), false);
  assert.equal(calls.length, 6);
});

test("a slow nvidia-smi skips ticks instead of overlapping; stop awaits the poll in flight", async () => {
  const ft = new FakeTimers();
  let running = 0, maxRunning = 0, started = 0;
  const exec: ExecFn = () => {
    started++;
    running++;
    maxRunning = Math.max(maxRunning, running);
    return new Promise((res) => {
      ft.setTimeout(() => {
        running--;
        res({ code: 0, stdout: "0, GPU-a, 200, 10, 100, 1000\n" });
      }, 2500);
    });
  };
  const s = new GpuTelemetrySampler({ source: { kind: "nvidia-smi", exec }, timers: ft });
  s.start();
  await ft.advance(6000);
  const stopping = s.stop();
  await ft.advance(3000);
  const tel = await stopping;
  assert.equal(maxRunning, 1);
  assert.ok(tel.skipped >= 3, `skipped ${tel.skipped}`);
  assert.equal(tel.n, started);
  assert.match(tel.note!, /ticks skipped/);
});

test("nvidia-smi missing under start(): polling ends by itself, stop takes no last poll", async () => {
  const ft = new FakeTimers();
  let calls = 0;
  const exec: ExecFn = () => {
    calls++;
    return Promise.resolve({ code: 127, stdout: "" });
  };
  const s = new GpuTelemetrySampler({ source: { kind: "nvidia-smi", exec }, timers: ft });
  s.start();
  await ft.advance(5000);
  assert.equal(s.polling, false);
  const tel = await s.stop();
  assert.equal(calls, 1);
  assert.equal(tel.ended, "not_available");
  assert.equal(tel.available, false);
  assert.equal(ft.pending.size, 0);
});

test("real timers: a 10 ms interval polls, and stop leaves nothing running", async () => {
  const s = new GpuTelemetrySampler({
    source: { kind: "nvidia-smi", exec: traceExec([["100", "200", "300"]]) },
    intervalMs: 10,
  });
  s.start();
  await new Promise((r) => setTimeout(r, 45));
  const tel = await s.stop();
  assert.ok(tel.n >= 2, `n ${tel.n}`);
  assert.equal(tel.available, true);
  assert.ok(tel.gpus[0].energy_j !== null && tel.gpus[0].energy_j > 0);
});

test("energyPerToken: P·T/N and (N/T)/P, reciprocals; nulls where power or tokens are missing", async () => {
  const c = clock();
  const ramp = Array.from({ length: 10 }, (_, i) => (100 + (200 * i) / 9).toFixed(6));
  const tel = await drive(
    new GpuTelemetrySampler({ source: { kind: "nvidia-smi", exec: traceExec([ramp]) }, now: c.now }),
    c,
    10,
  );
  const e = energyPerToken(tel, 1000, 9);
  assert.equal(e.power_w, 200);
  assert.equal(e.energy_j, 1800);
  assert.equal(e.joules_per_output_token, 1.8);
  assert.equal(e.output_tokens_per_s_per_watt, 0.555556);
  assert.equal(e.note, null);
  assert.match(e.definition, /P\*T\/N/);
  // The level's window (10 s) is longer than the sampled span: power is scaled to it.
  assert.equal(energyPerToken(tel, 1000, 10).joules_per_output_token, 2);
  assert.equal(energyPerToken(tel, 1000, 10).output_tokens_per_s_per_watt, 0.5);
  const noTokens = energyPerToken(tel, 0, 9);
  assert.equal(noTokens.joules_per_output_token, null);
  assert.equal(noTokens.output_tokens_per_s_per_watt, null);
  assert.equal(noTokens.power_w, 200);
  assert.match(noTokens.note!, /no output tokens/);
  assert.equal(energyPerToken(tel, 1000, 0).joules_per_output_token, null);
  assert.equal(energyPerToken(null, 1000, 9).note, "no GPU telemetry");
  assert.match(energyPerToken(tel, 1000, 60).note!, /covered only 9 s of the 60 s window/);

  const c2 = clock();
  const never = await drive(
    new GpuTelemetrySampler({
      source: { kind: "nvidia-smi", exec: traceExec([["[N/A]", "[N/A]"]]) },
      now: c2.now,
    }),
    c2,
    2,
  );
  const np = energyPerToken(never, 1000, 9);
  assert.equal(np.joules_per_output_token, null);
  assert.equal(np.output_tokens_per_s_per_watt, null);
  assert.equal(np.power_w, null);
  assert.match(np.note!, /no power readings/);
});

test("after a good poll, a killed nvidia-smi or an empty, 404 DCGM scrape does not end the polling", async () => {
  const good = read("nvidia_smi_h100x8.csv");
  let calls = 0;
  // good, killed at its limit, not found, good: the last reading is recorded.
  const exec: ExecFn = () => {
    calls++;
    return Promise.resolve(calls === 2 ? { code: null, stdout: "" } : calls === 3 ? { code: 127, stdout: "" } : { code: 0, stdout: good });
  };
  const s = new GpuTelemetrySampler({ source: { kind: "nvidia-smi", exec } });
  assert.equal(await s.sampleOnce(), true);
  assert.equal(await s.sampleOnce(), false);
  assert.equal(await s.sampleOnce(), false);
  assert.equal(await s.sampleOnce(), true, "the fourth poll still ran and was recorded");
  const tel = await s.stop();
  assert.equal(tel.available, true);
  assert.equal(tel.n, 2);
  assert.equal(tel.ended, "stop", "the background polling was not ended by the failures");
  assert.doesNotMatch(tel.note ?? "", /polling ended/);
  const ok = read("dcgm_h100x2_t0.prom");
  let scrapes = 0;
  const fetch: TelemetryFetch = () => {
    scrapes++;
    const [status, body] = scrapes === 2 ? [200, "# HELP up x\nup 1\n"] : scrapes === 3 ? [404, "restarting"] : [200, ok];
    return Promise.resolve({ status, text: () => Promise.resolve(body) });
  };
  const d = new GpuTelemetrySampler({ source: { kind: "dcgm", url: "http://127.0.0.1:9400/metrics", fetch }, timeoutMs: 50 });
  for (const want of [true, false, false, true]) assert.equal(await d.sampleOnce(), want);
  const dt = await d.stop();
  assert.equal(dt.n, 2);
  assert.equal(dt.ended, "stop");
  assert.doesNotMatch(dt.note ?? "", /polling ended/);
});

