#!/usr/bin/python3
"""Compact table of a bench:client run: every client at c=1 and c=64, µs/event and × the C floor.

  /usr/bin/python3 benchmarks/client/summary.py results/streamed-STAMP.jsonl [results/coalesced-STAMP.jsonl]

Same numbers as ../shared/perf/summarize.py (whole-process CPU from wait4 / 259 events per request,
median [min–max] over reps, ratio of medians to `c-floor-count` at the same concurrency), laid out
with both concurrencies side by side, plus two things summarize.py does not print:
  - ik / floor per rep (each rep runs every client back to back, so this pairs runs made under
    the same conditions), and ik / careful TS per rep;
  - the user / sys split of the client's loop, because the streamed regime is kernel-bound.
"""
import json
import statistics as st
import sys
from collections import defaultdict

ORDER = ["vllm-py", "openai-node", "openai-bun", "ts-min-bun", "ik", "c-floor-content", "c-floor-count"]
LABEL = {
    "vllm-py": "A vLLM `async_request_openai_chat_completions` (Py 3.11, aiohttp 3.8.4)",
    "openai-node": "B `openai` 6.49.0 SDK on Node 20.20.2",
    "openai-bun": "B `openai` 6.49.0 SDK on Bun 1.4.5",
    "ts-min-bun": "careful TS on Bun 1.4.5 (`client_min.ts`)",
    "ik": "**ik** `streamCompletion` on Bun 1.4.5 (`ik_bench.ts`)",
    "c-floor-content": "C floor + `\"content\":\"` scan",
    "c-floor-count": "C floor (count `data: ` events)",
}
FLOOR = "c-floor-count"


def load(path):
    rows = [json.loads(line) for line in open(path) if line.strip()]
    runs = [r for r in rows if not r.get("meta")]
    bad = [r for r in runs if r.get("rc") != 0 or r.get("ok") != r.get("requests")]
    good = [r for r in runs if r not in bad]
    g = defaultdict(list)
    for r in good:
        g[(r["name"], r["conc"])].append(r)
    return runs, bad, g


def table(path, title):
    runs, bad, g = load(path)
    concs = sorted({c for (_, c) in g})
    med = st.median
    fl = {c: med([r["cpu_us_per_event"] for r in g[(FLOOR, c)]]) for c in concs if g.get((FLOOR, c))}
    print(f"### {title}\n")
    print(f"Source: `{path}` ({len(runs)} runs, {len(bad)} failed/excluded). "
          "µs/event = whole-process user+sys (wait4) / events; median [min–max] over reps; "
          "× floor = ratio of medians to the C floor (count) at the same concurrency.\n")
    head = " | ".join(f"c={c} µs/event | × floor" for c in concs)
    print(f"| client | {head} |")
    print("|---|" + "---|---:|" * len(concs))
    names = ORDER + sorted({n for (n, _) in g} - set(ORDER))
    for n in names:
        cells = []
        for c in concs:
            rs = g.get((n, c))
            if not rs:
                cells += ["–", "–"]
                continue
            cpu = [r["cpu_us_per_event"] for r in rs]
            m = med(cpu)
            b = "**" if n == "ik" else ""
            cells += [f"{b}{m:.2f}{b} [{min(cpu):.2f}–{max(cpu):.2f}]", f"{b}{m / fl[c]:.1f}×{b}" if c in fl else "–"]
        if any(x != "–" for x in cells):
            print(f"| {LABEL.get(n, n)} | " + " | ".join(cells) + " |")
    print()
    for c in concs:
        per = defaultdict(dict)
        for (n, cc), rs in g.items():
            if cc == c:
                for r in rs:
                    per[r["rep"]][n] = r
        pairs = [(rep, d["ik"]["cpu_us_per_event"] / d[FLOOR]["cpu_us_per_event"],
                  d["ik"]["cpu_us_per_event"] / d["ts-min-bun"]["cpu_us_per_event"] if "ts-min-bun" in d else float("nan"))
                 for rep, d in sorted(per.items()) if "ik" in d and FLOOR in d]
        if pairs:
            print(f"- c={c}: ik / floor per rep " + ", ".join(f"{x:.2f}" for _, x, _ in pairs)
                  + f" (median {med([x for _, x, _ in pairs]):.2f}); ik / careful TS per rep "
                  + ", ".join(f"{y:.2f}" for _, _, y in pairs) + f" (median {med([y for _, _, y in pairs]):.2f})")
        for n in ("ik", "ts-min-bun", FLOOR):
            rs = g.get((n, c))
            if rs:
                u = med([r["loop_user_s"] / r["events"] * 1e6 for r in rs])
                s = med([r["loop_sys_s"] / r["events"] * 1e6 for r in rs])
                epr = [r["events"] / r["reads"] for r in rs if r.get("reads")]
                extra = f", {med(epr):.1f} events/read" if epr else ""
                print(f"  - {n}: loop user {u:.2f} + sys {s:.2f} µs/event{extra}")
    if bad:
        print(f"\nExcluded runs: {[(r['name'], r['conc'], r.get('rep'), r.get('rc')) for r in bad]}")
    print()


if __name__ == "__main__":
    table(sys.argv[1], "Streamed (main): the server writes each SSE event separately")
    if len(sys.argv) > 2:
        table(sys.argv[2], "Coalesced (diagnostic): one server write per response, parse-bound")
