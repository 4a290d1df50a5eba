#!/usr/bin/env python3
"""Writes the `ik summarize vllm` / `ik export --format vllm` fixtures under tests/testdata/vllm/.

The numbers in the result files come from here, never from ik: a small synthetic benchmark
(per-request TTFT, inter-frame gaps, output lengths, failures) is reduced to a `vllm bench serve`
result file the way vLLM's `calculate_metrics` reduces it (numpy, linear-interpolation
percentiles), and the values ik derives from a unit (tau, depth, cached share, the formatted
table rows, the per-category MTP table) are computed here a second time, independently, into
expected.json. ik's tests compare against those files, so the code under test never produces the
numbers it is checked against.

Usage: python3 scripts/gen_vllm_fixtures.py   (needs python3-numpy; the output is committed, so CI
does not need numpy). Deterministic: the same numpy gives the same bytes.
"""
import hashlib
import json
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "testdata", "vllm")
MT_BENCH = {"writing", "roleplay", "reasoning", "math", "coding", "extraction", "stem", "humanities"}
SB_OUT = 16
MODEL = "Qwen/Qwen3-8B"

# ---------------------------------------------------------------- the synthetic workload

QUESTIONS = [
    ("writing", "Write a haiku about autumn rain."),
    ("roleplay", "Pretend to be a ship's cook and greet the crew."),
    ("coding", "Write a Python function that reverses a list."),
    ("translation", "Translate 'good morning' into French."),
    ("summarization", "Summarise the plot of Hamlet in one sentence."),
    ("coding", "Explain what a hash map is."),
    ("qa", "What is the capital of Australia?"),
    ("writing", "Describe a lighthouse at night."),
]


def sha16(text):
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def specbench_prompts():
    return [(sha16(q), 20 + 3 * i, SB_OUT) for i, (_, q) in enumerate(QUESTIONS)]


def random_prompts():
    return [(sha16(f"random prompt {i}"), 40 + 7 * i, 10 + (i * 5) % 11) for i in range(8)]


def simulate(rng, prompts, depth, ttft_s, step_s, t0, gap_s, failed=(), scale=1.0):
    """One request per prompt: frames of 1..depth+1 tokens (the first frame carries one token),
    per-frame gaps near step_s, every time stretched by `scale` (a second pass of the same cell
    is the same draw, a little slower). Returns the per-request outputs and their container lines."""
    outs, lines = [], []
    t = t0
    for i, (_sha, plen, olen) in enumerate(prompts):
        t += gap_s * (0.5 + rng.random()) * scale
        if i in failed:
            outs.append(dict(ok=False, plen=plen, out=0, ttft=0.0, itl=[], lat=0.0, start=t,
                             error="ClientPayloadError: Response payload is not completed", text=""))
            # the server still generated part of it before the client gave up
            gen = olen // 2
            lines.append(dict(prompt=plen, cached=0, gen=gen, acc=0, prop=depth * gen))
            continue
        sizes, left = [1], olen - 1
        while left > 0:
            k = int(min(left, rng.integers(1, depth + 2)))
            sizes.append(k)
            left -= k
        ttft = float(ttft_s * (1 + 0.2 * rng.random()) * scale)
        itl = [float(step_s * (1 + 0.1 * rng.random()) * scale) for _ in sizes[1:]]
        lat = ttft + float(np.sum(itl))
        frames = len(sizes)
        acc = olen - frames
        outs.append(dict(ok=True, plen=plen, out=olen, ttft=ttft, itl=itl, lat=lat, start=t, error="",
                         text=" ".join(["tok"] * olen)))
        lines.append(dict(prompt=plen, cached=0, gen=olen, acc=acc, prop=depth * frames))
    return outs, lines


# ---------------------------------------------------------------- vLLM's reduction, re-done in numpy

def block(values, name, percentiles):
    v = values if values else [0.0]
    d = {f"mean_{name}_ms": float(np.mean(v)) * 1000, f"median_{name}_ms": float(np.median(v)) * 1000,
         f"std_{name}_ms": float(np.std(v)) * 1000}
    for p in percentiles:
        word = str(int(p)) if int(p) == p else str(p)
        d[f"p{word}_{name}_ms"] = float(np.percentile(v, p)) * 1000
    return d


def peak_stats(outs):
    ok = [o for o in outs if o["ok"]]
    if not ok:
        return 0.0, 0
    first = min(o["start"] for o in ok)
    last = max(o["start"] + o["lat"] for o in ok)
    n_buckets = int(np.ceil(last - first)) + 1
    per_s = np.zeros(n_buckets)
    for o in ok:
        t = o["start"] + o["ttft"]
        stamps = [t]
        for gap in o["itl"]:
            t += gap
            stamps.append(t)
        for s in stamps:
            b = int(s - first)
            if 0 <= b < n_buckets:
                per_s[b] += 1
    # peak overlap of half-open [start, end) intervals: an end sorts before a start at the same time
    edges = sorted([(o["start"], 1) for o in ok] + [(o["start"] + o["lat"], -1) for o in ok])
    cur = peak = 0
    for _, d in edges:
        cur += d
        peak = max(peak, cur)
    return float(np.max(per_s)), peak


def reduce(outs, duration, percentiles):
    good = [o for o in outs if o["ok"]]
    tpots = [(o["lat"] - o["ttft"]) / (o["out"] - 1) for o in good if o["out"] > 1]
    itls = [g for o in good for g in o["itl"]]
    out_lens = [o["out"] if o["ok"] else 0 for o in outs]
    total_in = sum(o["plen"] for o in good)
    peak_tok, peak_conc = peak_stats(outs)
    r = dict(
        duration=duration, completed=len(good), failed=len(outs) - len(good), total_input_tokens=total_in,
        total_output_tokens=sum(out_lens), request_throughput=len(good) / duration, request_goodput=None,
        output_throughput=sum(out_lens) / duration, total_token_throughput=(total_in + sum(out_lens)) / duration,
        input_lens=[o["plen"] for o in outs], output_lens=out_lens, ttfts=[o["ttft"] for o in outs],
        itls=[o["itl"] for o in outs], latencies=[o["lat"] for o in outs], start_times=[o["start"] for o in outs],
        queue_times=[0.0 for _ in outs], generated_texts=[o["text"] for o in outs], errors=[o["error"] for o in outs],
        max_output_tokens_per_s=peak_tok, max_concurrent_requests=peak_conc, rtfx=0.0,
    )
    r.update(block([o["ttft"] for o in good], "ttft", percentiles))
    r.update(block(tpots, "tpot", percentiles))
    r.update(block(itls, "itl", percentiles))
    r.update(block([o["lat"] for o in good], "e2el", percentiles))
    return r


def result_file(outs, *, rate, conc, label, fmt, percentiles=(50, 99)):
    """A result dict in the current layout, or in the legacy benchmark_serving.py one."""
    ends = [o["start"] + o["lat"] for o in outs]
    duration = max(ends) - min(o["start"] for o in outs) + 0.05
    m = reduce(outs, duration, percentiles)
    if fmt == "legacy":
        head = dict(date="20250301-101500", backend="vllm", model_id=MODEL, tokenizer_id=MODEL, best_of=1,
                    num_prompts=len(outs), request_rate=rate, burstiness=1.0, max_concurrency=conc)
        keep = ["duration", "completed", "total_input_tokens", "total_output_tokens", "request_throughput"]
        body = {k: m[k] for k in keep}
        body["request_goodput:"] = None
        for k in ("output_throughput", "total_token_throughput", "input_lens", "output_lens", "ttfts", "itls",
                  "generated_texts", "errors"):
            body[k] = m[k]
        for k, v in m.items():
            if k.endswith("_ms"):
                body[k] = v
        return {**head, **body}
    head = dict(date="20260110-093000", endpoint_type="openai-chat", backend="openai-chat", label=label,
                model_id=MODEL, tokenizer_id=MODEL, num_prompts=len(outs), request_rate=rate, burstiness=1.0,
                max_concurrency=conc)
    return {**head, **m}


# ---------------------------------------------------------------- what ik must derive (independently)

def fx(x, nd, w=0):
    return "-".rjust(w) if x is None else f"{x:{w}.{nd}f}"


def derived(res, outs, meas):
    gen = sum(r["gen"] for r in meas)
    acc = sum(r["acc"] for r in meas)
    prop = sum(r["prop"] for r in meas)
    steps = gen - acc
    good = [o for o in outs if o["ok"]]
    frames = sum(len(o["itl"]) for o in good)
    ptok = sum(r["prompt"] for r in meas)
    ctok = sum(r["cached"] for r in meas)
    tpot50 = res.get("p50_tpot_ms", res.get("median_tpot_ms"))
    e2e50 = res.get("p50_e2el_ms", res.get("median_e2el_ms"))
    return dict(
        completed=res["completed"], out_tps=res["output_throughput"], req_s=res["request_throughput"],
        ttft_p50=res.get("p50_ttft_ms", res.get("median_ttft_ms")), ttft_p99=res["p99_ttft_ms"],
        tpot_p50=tpot50, tpot_p99=res["p99_tpot_ms"], per_stream=1000.0 / tpot50, itl_p50=res.get("p50_itl_ms", res.get("median_itl_ms")),
        e2el_p50_s=e2e50 / 1000.0, tau=gen / steps if steps else None, depth=prop / steps if steps else None,
        tau_client=sum(o["out"] - 1 for o in good if o["itl"]) / frames if frames else None,
        acc_prop=acc / prop if prop else None, cached_share=ctok / ptok if ptok else None,
        mean_in=float(np.mean([o["plen"] for o in good])), mean_out=float(np.mean([o["out"] for o in good])),
        client_out=sum(o["out"] for o in good), container_gen=gen, mtp_n=len(meas),
    )


def table_line(conc, d):
    return (f"| {conc} | {d['completed']} | {fx(d['out_tps'], 1)} | {fx(d['req_s'], 2)} | {fx(d['ttft_p50'], 0)} / "
            f"{fx(d['ttft_p99'], 0)} | {fx(d['tpot_p50'], 2)} / {fx(d['tpot_p99'], 2)} | {fx(d['per_stream'], 0)} | "
            f"{fx(d['e2el_p50_s'], 2)} | {fx(d['tau'], 2)} | {fx(d['depth'], 2)} |")


def categories(cats, meas):
    by, groups = {}, {}
    for cat, r in zip(cats, meas):
        for key, table in ((cat, by), ("mt_bench" if cat in MT_BENCH else cat, groups)):
            b = table.setdefault(key, dict(acc=0, prop=0, n=0, gen=0))
            b["acc"] += r["acc"]
            b["prop"] += r["prop"]
            b["n"] += 1
            b["gen"] += r["gen"]
    for table in (by, groups):
        for b in table.values():
            b["tau"] = b["gen"] / (b["gen"] - b["acc"]) if b["gen"] > b["acc"] else None
            b["acc_prop"] = b["acc"] / b["prop"] if b["prop"] else None
    return by, groups


# ---------------------------------------------------------------- writing a unit

def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def tsv(rows, cols):
    return "\t".join(cols) + "\n" + "".join("\t".join(str(r.get(c, "")) for c in cols) + "\n" for r in rows)


def container_text(recs, noise):
    """vLLM-ish container log: ik-request lines among other output, key=value anywhere in a line."""
    out = ["INFO 01-10 09:29:58 api_server.py: Started server process", "INFO: Application startup complete."]
    for r in recs:
        out.append(f"INFO 01-10 09:30:{r['serial'] % 60:02d} [logger.py] ik-request serial={r['serial']} prompt={r['prompt']} "
                   f"cached={r['cached']} gen={r['gen']} acc={r['acc']} prop={r['prop']} first_ms=1.000 last_ms=2.000")
        if noise:
            out.append("INFO:     127.0.0.1:40000 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK")
    return "\n".join(out) + "\n"


def build_unit(name, cells, per_cell_logs, with_pass=True, boots=True):
    """cells: dicts with tag, pass, dataset, conc, prompts, depth, fmt, rate, conc_arg, failed."""
    udir = os.path.join(OUT, name)
    serial = 0
    runs, expected, shared_log, boot_rows = [], {}, [], []
    t0 = 1000.0
    for c in cells:
        warm = 1
        lo = serial
        step = 0.010 if c["conc"] == 1 else 0.013
        # one draw per (dataset, conc): pass B repeats pass A's draw, stretched by c["scale"]
        rng = np.random.default_rng([len(name), len(c["dataset"]), int(c["conc"])])
        outs, lines = simulate(rng, c["prompts"], c["depth"], 0.05 + 0.01 * c["conc"], step, t0,
                               0.2 / c["conc"], failed=c.get("failed", ()), scale=c.get("scale", 1.0))
        t0 += 100.0
        warm_lines = [dict(prompt=5, cached=0, gen=8, acc=4, prop=8) for _ in range(warm)]
        recs = []
        for r in warm_lines + lines:
            serial += 1
            recs.append(dict(serial=serial, **r))
        if c.get("cached"):
            for r in recs[warm:warm + c["cached"]]:
                r["cached"] = r["prompt"] // 2
        hi = serial
        res = result_file(outs, rate=c["rate"], conc=c.get("conc_arg"), label=c["tag"].split("-")[0], fmt=c["fmt"],
                          percentiles=c.get("percentiles", (50, 99)))
        text = json.dumps(res)
        if c["fmt"] == "jsonl":
            decoy = dict(res, output_throughput=res["output_throughput"] * 0.5, completed=res["completed"] - 1)
            text = json.dumps(decoy) + "\n" + json.dumps(res)
        write(os.path.join(udir, "results", f"{c['tag']}.json"), text)
        if c.get("manifest", True):
            write(os.path.join(udir, "results", f"{c['tag']}.samples.tsv"),
                  tsv([dict(i=i, sha=s, prompt_len=p, output_len=o) for i, (s, p, o) in enumerate(c["prompts"])],
                      ["i", "sha", "prompt_len", "output_len"]))
        row = dict(tag=c["tag"], dataset=c["dataset"], conc=c["conc"], serial_lo=lo, serial_hi=hi, warmups=warm,
                   catfile=c.get("catfile", "-"), rc=0)
        if with_pass:
            row["pass"] = c["pass"]
        if per_cell_logs:
            row["container"] = f"logs/{c['tag']}.log"
            write(os.path.join(udir, "logs", f"{c['tag']}.log"), container_text(recs, noise=True))
        else:
            shared_log += recs
        runs.append(row)
        meas = recs[warm:]
        d = derived(res, outs, meas)
        d["table_line"] = table_line(c["conc"], d)
        d["failed"] = res.get("failed", sum(1 for o in outs if not o["ok"]))
        d["n_prompts"] = res["num_prompts"]
        if c["dataset"] == "specbench" and c["conc"] == 1:
            cats = [QUESTIONS[i][0] for i in range(len(c["prompts"]))]
            by, groups = categories(cats, meas)
            d["categories"] = by
            d["task_groups"] = groups
        expected[c["tag"]] = d
        boot_rows.append(dict(tag=c["tag"], launcher_md5="5f1d0c2e9ab34c77", image="vllm/vllm-openai:v0.11.0",
                              image_id="sha256:7a1b", env_sha="e3b0c442", env_n=12, keys_n=40, policy="mtp3-c5d2",
                              cache="off", window=4096, slots=8, gpc_boot="0 0", gpc_after="0 0",
                              mem_boot="4500 4500", mem_after="4500 4500", power_limit_w=450, vram_free=81000))
    cols = ["tag"] + (["pass"] if with_pass else []) + ["dataset", "conc", "serial_lo", "serial_hi", "warmups", "catfile", "rc"]
    if per_cell_logs:
        cols.append("container")
    write(os.path.join(udir, "runs.tsv"), tsv(runs, cols))
    if not per_cell_logs:
        write(os.path.join(udir, "container.log"), container_text(shared_log, noise=False))
    if boots:
        write(os.path.join(udir, "boots.tsv"), tsv(boot_rows, list(boot_rows[0].keys())))
    return expected


def main():
    write(os.path.join(OUT, "question.jsonl"),
          "".join(json.dumps(dict(question_id=i, category=c, turns=[q])) + "\n" for i, (c, q) in enumerate(QUESTIONS)))
    sb, rnd = specbench_prompts(), random_prompts()
    # R731 layout: two passes (boots) A and B, a fresh server per cell (per-cell container logs)
    unit = []
    for ps in ("A", "B"):
        unit += [
            dict(tag=f"sb-c1-{ps}", pass_=ps, dataset="specbench", conc=1, prompts=sb, depth=3, fmt="modern", rate="inf", conc_arg=1),
            dict(tag=f"rnd-c1-{ps}", pass_=ps, dataset="random", conc=1, prompts=rnd, depth=3,
                 fmt="legacy" if ps == "A" else "modern", rate="inf", conc_arg=1, percentiles=(99,) if ps == "A" else (50, 99)),
            dict(tag=f"rnd-c4-{ps}", pass_=ps, dataset="random", conc=4, prompts=rnd, depth=3,
                 fmt="jsonl" if ps == "B" else "modern", rate="inf" if ps == "A" else 8.0, conc_arg=4 if ps == "A" else None),
        ]
    for c in unit:
        c["pass"] = c.pop("pass_")
        c["scale"] = 1.0 if c["pass"] == "A" else 1.012
    expected = {"unit": build_unit("unit", unit, per_cell_logs=True)}
    # failed requests inside the detailed arrays, current layout and legacy layout
    failed = [
        dict(tag="fail-modern", pass_="A", dataset="random", conc=2, prompts=rnd, depth=3, fmt="modern", rate=4.0, failed=(2, 5)),
        dict(tag="fail-legacy", pass_="A", dataset="random", conc=2, prompts=rnd, depth=3, fmt="legacy", rate=4.0, failed=(2, 5),
             percentiles=(99,)),
    ]
    for c in failed:
        c["pass"] = c.pop("pass_")
    expected["failed"] = build_unit("failed", failed, per_cell_logs=True, boots=False)
    # R725 layout: one boot for the whole unit (--container), no pass column, the c1 split by catfile
    r725 = [
        dict(tag="r725-sb-c1", pass_="-", dataset="specbench", conc=1, prompts=sb, depth=3, fmt="modern", rate="inf",
             conc_arg=1, catfile="c1_split.jsonl", manifest=False),
        dict(tag="r725-sb-c2", pass_="-", dataset="specbench", conc=2, prompts=sb, depth=3, fmt="modern", rate="inf",
             conc_arg=2, manifest=False),
    ]
    for c in r725:
        c["pass"] = c.pop("pass_")
    expected["r725"] = build_unit("r725", r725, per_cell_logs=False, with_pass=False, boots=False)
    write(os.path.join(OUT, "r725", "sb", "c1_split.jsonl"),
          "".join(json.dumps(dict(category=c, turns=[q])) + "\n" for c, q in QUESTIONS))
    # numpy's own numbers for lists long enough to take its pairwise-summation and interpolation paths
    ref = []
    for n in (5, 8, 129, 300):
        v = np.random.default_rng([n]).lognormal(-3.0, 0.6, n).tolist()
        ref.append(dict(values=v, mean=float(np.mean(v)), std=float(np.std(v)), median=float(np.median(v)),
                        percentiles={str(p): float(np.percentile(v, p)) for p in (1, 25, 50, 90, 95, 99, 99.9)}))
    # an even-length list whose median (mean of the middle two) differs in the last bit from the
    # 50th percentile (interpolated): median_* and p50_* are two computations in vLLM's file
    rng = np.random.default_rng(1)
    while True:
        v = sorted(rng.lognormal(-3.0, 0.6, 2).tolist())
        if np.median(v) != np.percentile(v, 50):
            break
    ref.append(dict(values=v, mean=float(np.mean(v)), std=float(np.std(v)), median=float(np.median(v)),
                    percentiles={"50": float(np.percentile(v, 50))}))
    write(os.path.join(OUT, "numpy_reference.json"), json.dumps(ref) + "\n")
    expected["sb_out"] = SB_OUT
    expected["generator"] = f"scripts/gen_vllm_fixtures.py, numpy {np.__version__}"
    write(os.path.join(OUT, "expected.json"), json.dumps(expected, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
