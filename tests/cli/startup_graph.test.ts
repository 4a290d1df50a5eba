/**
 * What every ik command loads at start: the static imports reachable from cli.ts (the CLI frame,
 * the runtime shim) and, after `--version`, from lib/commands/mod.ts (optique and the parsers in
 * lib/commands/*_flags.ts); nothing of a command's run. Each command's module is imported by
 * `dispatch` with `await import`, so `ik bench serve` never evaluates the mock server, the
 * tokenizers, the remote-write encoder or another command. Read from the source (no bundler, no
 * binary): both runtimes, in process.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { test } from "node:test";
import { ROOT } from "../_helpers/ik.ts";

/** `import … from "x"`, `export … from "x"` and `import "x"` at a line's start; group 2 marks `type`. */
const STATIC_RE =
  /^[ \t]*(?:import|export)\s+(type\s+)?((?:[\w$]+\s*,\s*)?(?:\{[^}]*\}|\*(?:\s+as\s+[\w$]+)?|[\w$]+))\s*from\s*["']([^"']+)["']|^[ \t]*import\s*["']([^"']+)["']/gm;
const DYNAMIC_RE = /\bimport\(\s*["']([^"']+)["']\s*\)/g;

/** The imports of a source text: static ones that load code at run time (not `import type`), and dynamic ones. */
function importsOf(text: string): { static: string[]; dynamic: string[] } {
  const src = text.replace(/^[ \t]*\/\*[\s\S]*?\*\//gm, "").replace(/^[ \t]*\/\/.*$/gm, "");
  const out: string[] = [];
  for (const m of src.matchAll(STATIC_RE)) {
    if (m[4] !== undefined) {
      out.push(m[4]);
      continue;
    }
    const clause = m[2].trim();
    // `import { type A, type B } from` is erased like `import type`.
    const named = /^\{([^}]*)\}$/.exec(clause)?.[1].split(",").map((s) => s.trim()).filter(Boolean);
    if (m[1] || (named && named.length > 0 && named.every((n) => n.startsWith("type ")))) continue;
    out.push(m[3]);
  }
  return { static: out, dynamic: [...src.matchAll(DYNAMIC_RE)].map((m) => m[1]) };
}

/** The static closure from `entries` (paths relative to the repo): its files and the packages they name. */
function staticClosure(entries: readonly string[]): { files: Set<string>; packages: Map<string, string> } {
  const files = new Set<string>();
  const packages = new Map<string, string>();
  const visit = (rel: string): void => {
    if (files.has(rel)) return;
    files.add(rel);
    for (const spec of importsOf(readFileSync(join(ROOT, rel), "utf8")).static) {
      if (spec.startsWith(".")) {
        const dep = relative(ROOT, join(ROOT, dirname(rel), spec));
        assert.ok(existsSync(join(ROOT, dep)), `${rel} imports ${spec}, which does not exist`);
        visit(dep);
      } else if (!spec.startsWith("node:")) {
        const name = spec.split("/").slice(0, spec.startsWith("@") ? 2 : 1).join("/");
        if (!packages.has(name)) packages.set(name, rel);
      }
    }
  };
  for (const e of entries) visit(e);
  return { files, packages };
}

/** The one package the parsers need. */
const START_PACKAGES = ["@optique/core"];
/** Rooms of a command's run: none of them loads at start. */
const RUN_ROOMS = [
  "lib/bench/", "lib/compare/", "lib/datasets/", "lib/engines_host/", "lib/executors/", "lib/export/", "lib/gpu/",
  "lib/live_metrics/", "lib/load_trial/", "lib/merge/", "lib/metrics/", "lib/mock/", "lib/points/", "lib/prompts/",
  "lib/report/", "lib/rounds/", "lib/scrape/", "lib/selftest/", "lib/shard/", "lib/summarize/", "lib/tokenize_remote/",
  "lib/tokenizer/",
];
/** Plain modules of those rooms the parsers read: names, defaults and `--fault`'s syntax (no I/O, no packages). */
const PARSER_READS = new Set([
  "lib/datasets/defaults.ts", "lib/datasets/types.ts", "lib/mock/faults.ts", "lib/mock/options.ts", "lib/mock/prng.ts",
  "lib/tokenize_remote/engines.ts",
]);
/** The command modules loaded at start besides the parsers (`*_flags.ts`). */
const START_COMMAND_FILES = new Set(["lib/commands/mod.ts", "lib/commands/context.ts", "lib/commands/bench_serve_modes.ts"]);

/** Where start-up begins: the CLI frame, then (after `--version`) the parsers. */
const START = ["cli.ts", "lib/commands/mod.ts"];

/** What in a start-up closure belongs to a command's run. */
function leaks(c: ReturnType<typeof staticClosure>): string[] {
  const out: string[] = [];
  for (const [name, by] of c.packages) if (!START_PACKAGES.includes(name)) out.push(`package ${name} (imported by ${by})`);
  for (const f of c.files) {
    if (RUN_ROOMS.some((r) => f.startsWith(r)) && !PARSER_READS.has(f)) out.push(f);
    if (f.startsWith("lib/commands/") && !f.endsWith("_flags.ts") && !START_COMMAND_FILES.has(f)) out.push(f);
  }
  return out.sort();
}

/** The commands `dispatch` runs: module and run function. */
const RUN_MODULES: Record<string, string> = {
  "bench_points.ts": "runBenchPoints",
  "bench_rounds.ts": "runBenchRounds",
  "bench_serve.ts": "runBenchServe",
  "bench_vllm.ts": "runBenchVllm",
  "compare.ts": "runCompare",
  "export.ts": "runExport",
  "load_trial.ts": "runLoadTrial",
  "merge.ts": "runMerge",
  "mock.ts": "runMock",
  "probe.ts": "runProbe",
  "prompts.ts": "runPrompts",
  "report.ts": "runReport",
  "selftest.ts": "runSelftest",
  "summarize.ts": "runSummarize",
};

test("--version loads no parser: cli.ts imports no package and no command's flags, and mod.ts dynamically", () => {
  const c = staticClosure(["cli.ts"]);
  assert.ok(c.files.has("lib/runtime/mod.ts") && c.files.has("lib/cli/version_info.ts"), "walked into the frame");
  assert.deepEqual([...c.packages.keys()], []);
  assert.deepEqual([...c.files].filter((f) => f.endsWith("_flags.ts") || f === "lib/commands/mod.ts"), []);
  assert.ok(importsOf(readFileSync(join(ROOT, "cli.ts"), "utf8")).dynamic.includes("./lib/commands/mod.ts"), "cli.ts imports mod.ts with await import");
});

test("start-up (the frame and the parsers) loads no command's run: only @optique/core, the frame and the runtime shim", () => {
  const c = staticClosure(START);
  assert.ok(c.files.has("lib/commands/mod.ts") && c.files.has("lib/commands/bench_serve_flags.ts"), "walked into the parsers");
  assert.ok(c.files.has("lib/runtime/mod.ts"), "walked into the runtime shim");
  assert.deepEqual(leaks(c), []);
});

test("dispatch imports every command's run module dynamically, and nothing but parsers statically", () => {
  const text = readFileSync(join(ROOT, "lib", "commands", "mod.ts"), "utf8");
  const { static: stat, dynamic } = importsOf(text);
  const local = stat.filter((s) => s.startsWith("."));
  assert.ok(local.length >= 14, `mod.ts imports the parsers (${local.join(", ")})`);
  for (const s of local) assert.match(s, /_flags\.ts$/, `mod.ts imports ${s} statically: import a *_flags.ts module, and the run with await import`);
  assert.deepEqual([...new Set(dynamic.map((s) => s.replace(/^\.\//, "")))].sort(), Object.keys(RUN_MODULES).sort());
  const closure = staticClosure(START).files;
  for (const [file, run] of Object.entries(RUN_MODULES)) {
    const rel = `lib/commands/${file}`;
    assert.ok(!closure.has(rel), `${rel} is in the static start-up graph`);
    assert.match(readFileSync(join(ROOT, rel), "utf8"), new RegExp(`export (async )?function ${run}\\(`), `${rel} exports ${run}`);
    assert.match(text, new RegExp(`import\\("\\./${file.replace(".", "\\.")}"\\)\\)\\.${run}\\(`), `dispatch runs ${run} from ${file}`);
  }
});

test("the check itself: a static import of a run module, or of its machinery, is a leak", () => {
  assert.deepEqual(importsOf('import type { A } from "./a.ts";\nexport type * from "./b.ts";\nimport { type C, type D } from "./c.ts";').static, []);
  assert.deepEqual(
    importsOf('import { a, type B } from "./a.ts";\nexport { c } from "./c.ts";\nimport "./side.ts";\nimport * as d from "d";\nimport E, { f } from "@s/e/sub";').static,
    ["./a.ts", "./c.ts", "./side.ts", "d", "@s/e/sub"],
  );
  assert.deepEqual(importsOf('/**\n * import { x } from "./doc.ts";\n */\n// import { y } from "./y.ts";\nconst m = await import("./m.ts");').static, []);
  assert.deepEqual(importsOf('const m = await import("./m.ts");').dynamic, ["./m.ts"]);
  // As if mod.ts imported bench serve's run statically: its tables (cli-table3) and live metrics leak in.
  const serve = leaks(staticClosure([...START, "lib/commands/bench_serve.ts"]));
  assert.ok(serve.includes("lib/commands/bench_serve.ts"), serve.join(", "));
  assert.ok(serve.some((l) => l.startsWith("package cli-table3")), serve.join(", "));
  assert.ok(serve.includes("lib/live_metrics/live_run.ts"), serve.join(", "));
  const mock = leaks(staticClosure([...START, "lib/commands/mock.ts"]));
  assert.ok(mock.some((l) => l.startsWith("package hono")) && mock.includes("lib/mock/mod.ts"), mock.join(", "));
});

test("a measuring command's own graph leaves the tokenizer library and the remote-write encoder to the runs that ask for them", () => {
  // Every module a command loads stays live for the run: at 1,000 streams each MB of it is two or
  // three of peak RSS (issue 21). --tokenizer and --prometheus-remote-write import theirs when given.
  for (const cmd of ["bench_serve.ts", "bench_vllm.ts", "bench_points.ts", "load_trial.ts"]) {
    const c = staticClosure([`lib/commands/${cmd}`]);
    assert.ok(c.files.has("lib/client/stream_completion.ts"), `walked into ${cmd}'s client`);
    for (const name of ["@huggingface/tokenizers", "@bufbuild/protobuf", "snappyjs"]) {
      assert.ok(!c.packages.has(name), `${cmd} loads ${name} (imported by ${c.packages.get(name)}): import it with await import where it is used`);
    }
    for (const f of ["lib/tokenizer/load_tokenizer.ts", "lib/live_metrics/remote_write.ts", "lib/live_metrics/write_request.ts"]) {
      assert.ok(!c.files.has(f), `${cmd} loads ${f} at its start`);
    }
  }
});
