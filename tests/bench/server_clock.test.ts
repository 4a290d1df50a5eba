/** The llama.cpp server clock beside the client's: TPOT on the same n − 1 steps (both runtimes, < 1 s). */
import assert from "node:assert/strict";
import { test } from "node:test";
import { serverClock, serverTpotMs } from "../../lib/bench/server_clock.ts";

const row = (bucket: string, e2e: number, ttft: number, tpot: number | null, t: Record<string, number | null> | null) =>
  ({ ok: true, bucket, e2e_ms: e2e, ttft_ms: ttft, tpot_ms: tpot, server_timings: t });

test("server TPOT is predicted_ms / (predicted_n − 1): llama-server's generation clock starts at the first decoded token", () => {
  assert.equal(serverTpotMs({ prompt_ms: 5, predicted_ms: 63, predicted_n: 64 }), 1);
  assert.equal(serverTpotMs({ prompt_ms: 5, predicted_ms: 10, predicted_n: 1 }), null);
  assert.equal(serverTpotMs({ prompt_ms: 5, predicted_ms: null, predicted_n: 64 }), null);
  // A client whose first-to-last span equals predicted_ms reads the same TPOT as the server (medians: nearest rank, the lower of two).
  const rows = [
    row("short", 100, 20, 2, { prompt_ms: 15, predicted_ms: 62, predicted_n: 32 }),
    row("short", 110, 22, 2.5, { prompt_ms: 16, predicted_ms: 77.5, predicted_n: 32 }),
    row("long", 300, 50, 4, { prompt_ms: 40, predicted_ms: 252, predicted_n: 64 }),
    { ok: false, bucket: "long", e2e_ms: null, ttft_ms: null, tpot_ms: null, server_timings: null },
  ];
  const c = serverClock(rows, ["short", "long"]) as Record<string, Record<string, number>>;
  assert.deepEqual(c.short, { n: 2, client_minus_server_e2e_ms_median: 110 - 16 - 77.5, client_minus_server_ttft_ms_median: 5, server_tpot_ms_median: 2, client_tpot_ms_median: 2 });
  assert.equal(c.long.server_tpot_ms_median, 4);
  assert.equal(c.all.n, 3);
  assert.equal(c.all.server_tpot_ms_median, 2.5);
  assert.match(String(c.definition), /predicted_ms \/ \(predicted_n − 1\)/);
  assert.equal(serverClock([rows[3]], ["long"]), null);
});
