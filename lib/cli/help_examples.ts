/**
 * Examples printed under a command's help when its own module has none (`ik mock --help`,
 * `ik selftest --help`, `ik probe --help`, bare `ik`). completion carries its own.
 * @module
 */

/** Example lines per help page ("" is the top-level page). */
export const HELP_EXAMPLES: Readonly<Record<string, readonly string[]>> = {
  "": [
    "ik probe --base-url http://127.0.0.1:8000 --model Qwen/Qwen2.5-0.5B-Instruct",
    "ik mock --engine vllm --port 8000",
    "ik selftest --quick",
    "ik bench serve --base-url http://127.0.0.1:8000 --model Qwen/Qwen2.5-0.5B-Instruct",
  ],
  mock: [
    "ik mock --engine vllm --port 8000",
    "ik mock --engine sglang --port 0 --tpot-ms 5 --fault http429@5",
    "ik mock --engine llamacpp --fault slow-headers:3",
  ],
  probe: [
    "ik probe --base-url http://127.0.0.1:8000 --model Qwen/Qwen2.5-0.5B-Instruct",
    "ik probe --base-url http://127.0.0.1:8080/v1 --model m --max-tokens 64 --json",
    "ik probe --base-url https://gw.example/proxy --model m --api-key-env OPENAI_API_KEY --engine-kind vllm",
  ],
  selftest: ["ik selftest", "ik selftest --verbose", "ik selftest --quick --json"],
  bench: [
    "ik bench serve --base-url http://127.0.0.1:8000 --model Qwen/Qwen2.5-0.5B-Instruct",
    "ik bench serve --base-url http://127.0.0.1:8000 --model m --prompts set.jsonl --rounds 5 --run-dir runs/cmp --label vllm-a",
    "ik bench serve --base-url http://127.0.0.1:8000 --model m --extend serve_benchmark-20261201T090000Z-1a2b3c4d",
    "ik bench rounds engines.json --prompts set.jsonl --serve-args \"--max-tokens 128\"",
    "ik bench rounds engines.json --mode load --serve-args \"--concurrency 1,4,16 --slo-ttft-p95-ms 500\" --engines vllm,sglang",
    "ik bench vllm --base-url http://127.0.0.1:8000 --model m --dataset-name random --random-input-len 1024 --random-output-len 128 --num-prompts 200 --request-rate 4 --max-concurrency 16 --save-result --result-dir results/",
    "ik bench points --base http://127.0.0.1:18000 --model m --plan runs/benchmark-plan.json --out runs/benchmark-001",
    "srun -n 4 --kill-on-bad-exit=0 --output=slice-%t.json ik bench serve --mode load --shard auto --start-at 1796140800000 --base-url http://gpu01:8000 --model m --rates 8,16 --gpu-name H100 --gpu-count 8 --json",
  ],
  "bench serve": [
    "ik bench serve --base-url http://127.0.0.1:8000 --model m --prompts set.jsonl --rounds 5 --run-dir runs/cmp --label vllm-a",
    "ik bench serve --base-url http://127.0.0.1:8000 --model m --mode load --rates 1,2,4,8 --duration-s 30 --slo-ttft-p95-ms 500 --gpu-price-usd-h 2.5",
    "ik bench serve --base-url http://127.0.0.1:8000 --model m --mode load --rates auto --requests 200 --slo-ttft-p95-ms 500",
    "ik bench serve --base-url http://127.0.0.1:8000 --model m --mode trace --dataset mooncake --dataset-path mooncake_trace.jsonl --time-scale 0.5",
    "ik bench serve --base-url http://127.0.0.1:8000 --model m --mode conversations --conversations synth:16:4:256:64 --sessions 4",
    "ik bench serve --base-url http://127.0.0.1:8000 --model m --extend serve_benchmark-20261201T090000Z-1a2b3c4d",
  ],
  "bench rounds": [
    "# engines.json, the minimal manifest: {\"engines\": [{\"label\": \"a\", \"launch\": [\"vllm\", \"serve\", \"m\", \"--port\", \"8001\"], \"port\": 8001}, {\"label\": \"b\", \"launch\": [\"python3\", \"-m\", \"sglang.launch_server\", \"--model-path\", \"m\", \"--port\", \"8002\"], \"port\": 8002}]}",
    "ik bench rounds engines.json --prompts set.jsonl --serve-args \"--max-tokens 128\"",
    "ik bench rounds engines.json --rounds 12 --ci-target 0.02 --run-dir runs/ab",
    "ik bench rounds engines.json --mode load --serve-args \"--concurrency 1,4,16 --slo-ttft-p95-ms 500\" --engines a,b",
  ],
  "bench vllm": [
    "ik bench vllm --base-url http://127.0.0.1:8000 --model m --dataset-name random --random-input-len 1024 --random-output-len 128 --num-prompts 200 --request-rate 4 --max-concurrency 16 --save-result --result-dir results/",
    "ik bench vllm --host 127.0.0.1 --port 8000 --model m --dataset-name sharegpt --dataset-path ShareGPT_V3_unfiltered_cleaned_split.json --num-prompts 500 --request-rate inf",
  ],
  "bench points": [
    "ik bench points --base http://127.0.0.1:18000 --model m --plan runs/benchmark-plan.json --out runs/benchmark-001",
    "ik bench points --base http://127.0.0.1:18000 --model m --plan plan.json --out runs/p2 --drain-source metrics --poll-s 0.5",
  ],
  "load-trial": [
    "ik load-trial prepare --out runs/lt --synth 512:128 --requests 200",
    "ik load-trial run --base http://127.0.0.1:18000 --expected-model m --workload runs/lt/workload/workload.json --rate 1 --requests 200 --ttft 2 --tpot 0.0333 --attainment 0.95 --out runs/lt/r1",
  ],
  prompts: [
    "ik prompts validate prompts.jsonl",
    "ik prompts info builtin:default",
    "ik prompts synth --bucket short:128:64 --bucket long:2048:256 --per-bucket 16 --out synth.jsonl",
    "ik prompts build --dataset sharegpt --dataset-path ShareGPT_V3_unfiltered_cleaned_split.json --num-prompts 500 --out sharegpt.jsonl",
  ],
  summarize: [
    "ik summarize vllm --runs unit/runs.tsv --results unit/results --boots unit/boots.tsv --sb-data question.jsonl --decide \"A B\"",
    "ik summarize vllm --runs r725/runs.tsv --results r725/results --container r725/container.log --sb-dir specbench/ --json",
  ],
  export: [
    "ik export serve_benchmark-20261201T090000Z-1a2b3c4d --format csv --out sheets/",
    "# --format vllm takes a load-mode record (its levels are vllm bench serve runs), e.g. the one a capacity record cites:",
    "ik export runs/serve_benchmark-20261201T091500Z-5e6f7a8b/evidence.json --format vllm --out exported/",
    "ik summarize vllm --runs exported/runs.tsv --results exported/",
  ],
  compare: [
    "ik compare serve_benchmark-20261201T090000Z-1a2b3c4d serve_benchmark-20261201T091500Z-5e6f7a8b",
    "ik compare runs/serve_benchmark-20261201T090000Z-1a2b3c4d runs/serve_benchmark-20261201T091500Z-5e6f7a8b --json",
    "ik compare A_ID B_ID --allow-incomplete --resamples 5000 --seed 1",
  ],
  merge: [
    "ik merge /shared/ik/runs --group run-1796140800000",
    "ik merge runs/serve_benchmark-20261201T090000Z-1a2b3c4d runs/serve_benchmark-20261201T090001Z-5e6f7a8b --json",
    "ik merge /shared/ik/runs --allow-partial --fail-on-slo",
  ],
  report: [
    "ik report serve_benchmark-20261201T090000Z-1a2b3c4d",
    "ik report capacity-20261201T090000Z-1a2b3c4d --html capacity.html",
    "ik report runs/cmp --html rounds.html",
    "ik report runs --out store.md",
  ],
};

/**
 * The help page argv asks for: the command named (after an optional `help`), with its subcommand
 * where that page has examples of its own (`bench serve`), or "" for the top.
 */
export function helpPageOf(argv: readonly string[]): string {
  const words = argv.filter((a) => !a.startsWith("-"));
  const w = words[0] === "help" ? words.slice(1) : words;
  const two = w.length >= 2 ? `${w[0]} ${w[1]}` : null;
  return two !== null && two in HELP_EXAMPLES ? two : w[0] ?? "";
}

/** The examples block for a help page, or "" when the page has its own (or none are known). */
export function examplesBlock(page: string, pageText: string): string {
  const lines = HELP_EXAMPLES[page];
  if (!lines || /^Examples:/m.test(pageText)) return "";
  return (pageText.endsWith("\n\n") ? "" : "\n") + "Examples:\n" + lines.map((l) => `  ${l}`).join("\n") +
    "\n";
}
