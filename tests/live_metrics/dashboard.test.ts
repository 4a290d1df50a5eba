/**
 * docs/grafana/ik.json queries only series ik emits, and ik emits every series it lists: each
 * `ik_…` name in a panel's expression or a variable's query is one of IK_SERIES (histograms with
 * their `_bucket`/`_sum`/`_count`), and a fresh IkSeries registry renders a HELP line for each.
 * In process, both runtimes, < 1 s.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { IK_SERIES, IkSeries } from "../../lib/live_metrics/ik_series.ts";
import { ROOT } from "../_helpers/ik.ts";

const HISTOGRAMS = new Set(["ik_ttft_seconds", "ik_tpot_seconds", "ik_itl_seconds", "ik_e2e_seconds", "ik_send_lag_seconds"]);

test("every series the dashboard queries is one ik emits", () => {
  const dash = JSON.parse(readFileSync(join(ROOT, "docs", "grafana", "ik.json"), "utf8"));
  const exprs: string[] = [...dash.panels.flatMap((p: { targets: { expr: string }[] }) => p.targets.map((t) => t.expr)), ...dash.templating.list.map((v: { query: string }) => v.query)];
  const used = new Set(exprs.flatMap((e) => [...e.matchAll(/\bik_[a-z0-9_]+/g)].map((m) => m[0])));
  assert.ok(used.size >= 10, `the dashboard queries ${used.size} series`);
  for (const name of used) {
    const base = name.replace(/_(bucket|sum|count)$/, "");
    const ok = (IK_SERIES as readonly string[]).includes(name) || (HISTOGRAMS.has(base) && name !== base);
    assert.ok(ok, `${name} is not a series ik emits`);
  }
  for (const p of dash.panels) assert.ok(p.title && p.targets.length, "each panel has a title and a query");
});

test("ik emits every series it lists", () => {
  const s = new IkSeries({ run_id: "r1", label: "vllm", engine_kind: "vllm", shard: "0/1", endpoint: "hmac:abc" }, "load");
  s.levelStart("r1", 1, 10);
  const text = s.registry.render();
  for (const name of IK_SERIES) assert.match(text, new RegExp(`^# HELP ${name} `, "m"), name);
  for (const h of HISTOGRAMS) assert.match(text, new RegExp(`^# TYPE ${h} histogram$`, "m"), h);
});
