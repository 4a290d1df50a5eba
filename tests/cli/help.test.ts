/**
 * Help through the compiled binary and cli.ts (issue 7 §3): bare `ik` prints the help (0), `-h`
 * works wherever `--help` does, a misspelt option gets "Did you mean", and every command's help
 * carries an example. Budget: a few seconds per variant.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ikVariants, runArgv } from "../_helpers/ik.ts";

const COMMANDS = ["probe", "mock", "selftest", "completion"];

for (const v of ikVariants()) {
  describe(`ik help (${v.name})`, () => {
    const ik = (args: string[]) => runArgv(v.argv, args, { timeoutMs: 30_000 });

    test("bare ik prints the help and exits 0, like --help", async () => {
      const [bare, long] = await Promise.all([ik([]), ik(["--help"])]);
      assert.equal(bare.code, 0, bare.stderr);
      assert.equal(bare.stderr, "");
      assert.match(bare.stdout, /Usage: ik /);
      assert.equal(bare.stdout, long.stdout);
      assert.match(bare.stdout, /Examples:\n {2}ik probe /);
    });

    test("-h works as --help at the top and for every command", async () => {
      for (const args of [[], ...COMMANDS.map((c) => [c])]) {
        const [short, long] = await Promise.all([ik([...args, "-h"]), ik([...args, "--help"])]);
        assert.equal(short.code, 0, `${args.join(" ")} -h: ${short.stderr}`);
        assert.equal(short.stdout, long.stdout, args.join(" "));
      }
    });

    test("every command's help has an example", async () => {
      for (const c of COMMANDS) {
        const r = await ik([c, "--help"]);
        assert.equal(r.code, 0, r.stderr);
        assert.match(r.stdout, new RegExp(`Examples:\\n[\\s\\S]*\\bik ${c}\\b`), c);
        assert.equal((r.stdout.match(/^Examples:/gm) ?? []).length, 1, `${c}: one Examples block`);
      }
    });

    test("every help page: each option has a description, no JSON-escaped text, bench's subcommands show their own examples", async () => {
      const pages = [[], ["probe"], ["mock"], ["selftest"], ["bench"], ["bench", "serve"], ["bench", "rounds"], ["bench", "vllm"], ["bench", "points"],
        ["load-trial"], ["load-trial", "prepare"], ["load-trial", "run"], ["prompts"], ["prompts", "validate"], ["prompts", "info"], ["prompts", "synth"], ["prompts", "build"],
        ["summarize"], ["export"], ["compare"], ["merge"], ["report"]];
      const examples = new Map<string, string>();
      for (const page of pages) {
        const r = await ik([...page, "--help"]);
        const name = page.join(" ") || "ik";
        assert.equal(r.code, 0, `${name}: ${r.stderr}`);
        assert.doesNotMatch(r.stdout, /\\"/, `${name}: no JSON-escaped quotes`);
        const bare = r.stdout.split("\n").filter((l) => /^ {2}-{1,2}[A-Za-z]/.test(l) && l.trim().split(/\s{2,}/).length < 2);
        assert.deepEqual(bare, [], `${name}: options without a description`);
        const ex = r.stdout.slice(r.stdout.lastIndexOf("Examples:"));
        if (page[0] === "bench" && page[1]) {
          for (const l of ex.split("\n").slice(1).filter((x) => x.trim())) assert.match(l.trim(), new RegExp(`^(#|ik bench ${page[1]}\\b)`), `${name}: ${l}`);
          examples.set(name, ex);
        }
      }
      assert.equal(new Set(examples.values()).size, 4, "bench serve, rounds, vllm and points each show their own examples");
      assert.match(examples.get("bench rounds") as string, /"engines": \[\{"label"/, "bench rounds shows a minimal manifest");
    });

    test("a misspelt option of a command: one line with 'did you mean', exit 64", async () => {
      for (
        const [args, want] of [
          [["probe", "--base-ur", "http://127.0.0.1:1", "--model", "m"], "--base-url"],
          [["probe", "--base-url", "http://127.0.0.1:1", "--modle", "m"], "--model"],
          [["mock", "--engin", "vllm"], "--engine"],
        ] as const
      ) {
        const r = await ik([...args]);
        assert.equal(r.code, 64, r.stderr);
        assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
        assert.match(r.stderr, new RegExp(`did you mean \`?${want}\`?\\?`, "i"), r.stderr);
      }
      const cmd = await ik(["probee"]);
      assert.match(cmd.stderr, /did you mean `?probe`?\?/i);
    });

    test("a subcommand's misspelt option: its own near miss and its own help, never 'ik bench --help'", async () => {
      for (
        const [args, where, want] of [
          [["bench", "serve", "--duraton-s", "3"], "bench serve", "--duration-s"],
          [["bench", "serve", "--rate", "4"], "bench serve", "--rates"],
          [["bench", "serve", "--base", "http://127.0.0.1:1"], "bench serve", "--base-url"],
          [["probe", "--base", "http://127.0.0.1:1"], "probe", "--base-url"],
          [["load-trial", "run", "--expected-modle", "m"], "load-trial run", "--expected-model"],
          [["prompts", "synth", "--bukcet", "a:1:1"], "prompts synth", "--bucket"],
          [["summarize", "vllm", "--run", "x"], "summarize vllm", "--runs"],
        ] as const
      ) {
        const r = await ik([...args]);
        assert.equal(r.code, 64, r.stderr);
        assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
        assert.match(r.stderr, new RegExp(`^ik: ${where}: unknown option \`${args.find((a) => a.startsWith("--"))}\`\\. Did you mean \`${want}\`\\?; see 'ik ${where} --help'$`, "m"), r.stderr);
      }
      // Another command's error also points at its own help.
      const missing = await ik(["bench", "serve", "--base-url", "http://127.0.0.1:1"]);
      assert.match(missing.stderr, /^ik: bench serve: Missing option `--model`; see 'ik bench serve --help'$/m);
    });

    test("another tool's flag (vLLM, AIPerf, guidellm) says what ik calls it", async () => {
      for (
        const [flag, want] of [
          ["--request-rate", /use --rates R,S with --mode load/],
          ["--max-concurrency", /use --concurrency N --closed-loop/],
          ["--num-prompts", /use --requests N with --mode load \(exactly N arrivals per level\)/],
          ["--dataset-name", /use --dataset NAME --dataset-path FILE \(sharegpt, sonnet, jsonl, burstgpt, azure, mooncake\), or --prompts FILE/],
          ["--goodput", /use --slo-ttft-p95-ms, --slo-tpot-p95-ms and --slo-e2e-p95-ms/],
          ["--save-result", /'ik export --format vllm --out DIR' writes vLLM's result files/],
          ["--max-seconds", /use --duration-s S/],
        ] as const
      ) {
        const r = await ik(["bench", "serve", flag, "4"]);
        assert.equal(r.code, 64, r.stderr);
        assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
        assert.match(r.stderr, new RegExp(`^ik: bench serve: unknown option \`${flag}\`\\. That is another tool's flag: in 'ik bench serve' `), r.stderr);
        assert.match(r.stderr, want, r.stderr);
        assert.match(r.stderr, /; see 'ik bench serve --help'$/m);
      }
    });

    test("a URL with credentials in a parse error is redacted", async () => {
      const r = await ik(["--base-url", "http://u:hunter22@h:1/v1?api_key=abcd1234"]);
      assert.equal(r.code, 64);
      assert.ok(!r.stderr.includes("hunter22") && !r.stderr.includes("abcd1234"), r.stderr);
    });
  });
}
