/** lib/rounds/manifest and engine_select: defaults, every problem reported at once, --engines. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { IkError } from "../../lib/cli/errors.ts";
import { checkManifest, engineKindFromLaunch, engineKindFromName, metricsPathOf, parseManifest, selectEngines } from "../../lib/rounds/mod.ts";

const good = {
  model: { id: "tiny" },
  workload: { extra_body: { temperature: 0.6 }, chat_template_kwargs: { enable_thinking: false } },
  engines: [
    { name: "vllm", label: "v", version: "0.11.0", launch: ["vllm", "serve", "m"], port: 8001, env: { HF_HOME: "/h" }, expect: { max_num_seqs: 256 } },
    { name: "llama.cpp-build", launch: ["llama-server"], port: 8002, ready_check: "health", metrics_path: "metrics2", role: "baseline", cwd: "/tmp", host: "0.0.0.0", version: 7 },
    { name: "trtllm", launch: ["trtllm-serve"], port: 8003 },
  ],
};

function errorOf(fn: () => unknown): IkError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof IkError, `expected IkError, got ${e}`);
    return e;
  }
  assert.fail("no error thrown");
}

describe("parseManifest", () => {
  test("defaults: label from name, ready_check /v1/models, host, run dir the manifest's folder", () => {
    const m = parseManifest(JSON.stringify(good), "/runs/exp1/manifest.json");
    assert.equal(m.run_dir, "/runs/exp1");
    // A UTF-8 byte-order mark before the JSON (an editor's) is not a parse error.
    assert.equal(parseManifest("\uFEFF" + JSON.stringify(good), "/runs/exp1/manifest.json").model_id, "tiny");
    assert.equal(m.model_id, "tiny");
    assert.deepEqual(m.extra_body, { temperature: 0.6 });
    assert.deepEqual(m.chat_template_kwargs, { enable_thinking: false });
    const [v, l, t] = m.engines;
    assert.deepEqual(v, {
      label: "v", name: "vllm", kind: "vllm", kind_source: "name", version: "0.11.0", launch: ["vllm", "serve", "m"], env: { HF_HOME: "/h" }, port: 8001,
      host: "127.0.0.1", ready_check: "/v1/models", metrics_path: null, role: null, cwd: null, expect: { max_num_seqs: 256 },
    });
    assert.equal(l.label, "llama.cpp-build");
    // "llama.cpp-build" names no kind; its launch argv does (issue 18).
    assert.equal(l.kind, "llamacpp");
    assert.equal(l.kind_source, "launch");
    assert.equal(l.ready_check, "/health");
    assert.equal(l.metrics_path, "/metrics2");
    assert.equal(l.version, "7");
    assert.deepEqual([l.host, l.role, l.cwd], ["0.0.0.0", "baseline", "/tmp"]);
    assert.equal(t.kind, "trtllm");
    assert.deepEqual(metricsPathOf(t), { path: "/prometheus/metrics", source: "engine default" });
    assert.deepEqual(metricsPathOf(l), { path: "/metrics2", source: "manifest" });
    assert.deepEqual(metricsPathOf(v), { path: "/metrics", source: "engine default" });
    assert.equal(parseManifest(JSON.stringify({ engines: [good.engines[2]] }), "m.json").run_dir, ".");
  });

  test("as the seed reads `label or name`: an empty label takes the name, a number is its text, an empty host or ready_check the default; a padded label is refused", () => {
    const { manifest, problems } = checkManifest({
      engines: [{ label: "", name: "x", launch: ["a"], port: 1, host: "", ready_check: "" }, { label: 5, launch: ["b"], port: 2 }],
    }, "m.json");
    assert.deepEqual(problems, []);
    assert.deepEqual(manifest!.engines.map((e) => [e.label, e.host, e.ready_check]), [["x", "127.0.0.1", "/v1/models"], ["5", "127.0.0.1", "/v1/models"]]);
    const padded = checkManifest({ engines: [{ label: " a", launch: ["a"], port: 1 }] }, "m.json").problems;
    assert.ok(padded.some((p) => p.field === "label" && /may only use letters/.test(p.message)), JSON.stringify(padded));
    const odd = checkManifest({ engines: [{ label: true, launch: ["a"], port: 1 }] }, "m.json").problems;
    assert.deepEqual(odd.map((p) => `${p.field}: ${p.message}`), ["label: must be a string (or a number)"], "one problem, not two contradictory ones");
  });

  test("a label over 64 characters is refused (it names files and the child's --label)", () => {
    const { problems } = checkManifest({ engines: [{ label: "x".repeat(65), launch: ["a"], port: 1 }] }, "m.json");
    assert.ok(problems.some((p) => p.field === "label" && /at most 64/.test(p.message)), JSON.stringify(problems));
    assert.equal(checkManifest({ engines: [{ label: "x".repeat(64), launch: ["a"], port: 1 }] }, "m.json").problems.length, 0);
  });

  test("kind from name only for the four known kinds (case and punctuation ignored), else auto", () => {
    assert.deepEqual(["vllm", "SGLang", "llamacpp", "trtllm", "llama.cpp", "TensorRT-LLM", "vLLM", "mock", "vllm-fork", "", null].map(engineKindFromName),
      ["vllm", "sglang", "llamacpp", "trtllm", "llamacpp", "trtllm", "vllm", "auto", "auto", "auto", "auto"]);
  });

  test("kind from the launch argv when the name gives none (issue 18): vllm serve, python -m sglang.launch_server, llama-server, trtllm-serve", () => {
    const cases: [string[], string | null][] = [
      [["vllm", "serve", "Qwen/Qwen3-8B", "--speculative-config", "{}"], "vllm"],
      [["/opt/venv/bin/vllm", "serve", "m"], "vllm"],
      [["python3", "-m", "vllm.entrypoints.openai.api_server", "--model", "m"], "vllm"],
      [["python", "-m", "sglang.launch_server", "--model-path", "m"], "sglang"],
      [["sglang", "serve", "--model-path", "m"], "sglang"],
      [["/build/bin/llama-server", "-m", "m.gguf"], "llamacpp"],
      [["trtllm-serve", "m"], "trtllm"],
      [["bash", "-c", "source env.sh && exec vllm serve m --port 8000"], "vllm"],
      [["env", "CUDA_VISIBLE_DEVICES=0", "llama-server", "-m", "x"], "llamacpp"],
      [["python", "serve.py", "--model", "vllm"], null],
      [["./my-engine", "--port", "1"], null],
    ];
    for (const [argv, kind] of cases) assert.equal(engineKindFromLaunch(argv), kind, argv.join(" "));
    const m = parseManifest(JSON.stringify({ engines: [
      { label: "mtp", name: "vllm-mtp", launch: ["vllm", "serve", "m", "--speculative-config", "{\"method\":\"mtp\"}"], port: 1 },
      { label: "sg", name: "sglang-radix", launch: ["python", "-m", "sglang.launch_server"], port: 2 },
      { label: "odd", name: "custom", launch: ["./run.sh"], port: 3 },
      { label: "mixed", name: "sglang", launch: ["vllm", "serve", "m"], port: 4 },
    ] }), "m.json");
    assert.deepEqual(m.engines.map((e) => [e.label, e.kind, e.kind_source]), [["mtp", "vllm", "launch"], ["sg", "sglang", "launch"], ["odd", "auto", "none"], ["mixed", "sglang", "name"]]);
    assert.match(m.warnings.join("\n"), /engine "mixed" \(engines\[3\]\): name "sglang" says sglang but the launch argv runs vllm/);
  });

  test("unknown engine fields are warnings, not errors", () => {
    const m = parseManifest(JSON.stringify({ engines: [{ ...good.engines[2], lanch: ["x"] }] }), "m.json");
    assert.match(m.warnings[0], /engine "trtllm" \(engines\[0\]\): unknown field\(s\) lanch/);
  });

  test("invalid JSON is a data error (65)", () => {
    const e = errorOf(() => parseManifest("{engines:", "/x/m.json"));
    assert.equal(e.code, 65);
    assert.match(e.oneLine(), /^ik: \/x\/m\.json: the manifest is not valid JSON/);
  });
});

describe("manifest problems: all at once, each with engine and field", () => {
  const cases: [string, unknown, string[]][] = [
    ["not an object", [1], ["(manifest): must be a JSON object"]],
    ["no engines", { engines: [] }, ["engines: must be a non-empty list"]],
    ["engine not an object", { engines: [3] }, ["engines[0] (entry): must be an object"]],
    ["no label nor name, bad launch and port", { engines: [{ port: "80" }] },
      ["engines[0] label: missing", "engines[0] launch: must be a non-empty list of strings", 'engines[0] port: must be an integer from 1 to 65535, got "80"']],
    ["duplicate label, bad label characters", { engines: [{ label: "a", launch: ["x"], port: 1 }, { name: "a", launch: ["x"], port: 2 }, { label: "a b", launch: ["x"], port: 3 }] },
      ['engine "a" (engines[1]) label: also the label of engines[0]', `engine "a b" (engines[2]) label: may only use letters`]],
    ["env, optional strings, expect", {
      engines: [{ label: "e", launch: ["x", 3], port: 70000, env: { "BAD-NAME": "1", N: 2 }, host: " ", ready_check: 5, metrics_path: [], role: 1, cwd: {}, expect: [1] }],
    }, [
      'engine "e" (engines[0]) launch:', 'engine "e" (engines[0]) port: must be an integer from 1 to 65535, got 70000',
      'engine "e" (engines[0]) env.BAD-NAME: is not a valid', 'engine "e" (engines[0]) env.N: must be a string',
      'engine "e" (engines[0]) host: must be a non-empty string', 'engine "e" (engines[0]) ready_check:', 'engine "e" (engines[0]) metrics_path:',
      'engine "e" (engines[0]) role:', 'engine "e" (engines[0]) cwd:', 'engine "e" (engines[0]) expect: must be an object',
    ]],
    ["env not an object", { engines: [{ label: "e", launch: ["x"], port: 1, env: "A=1" }] }, ['engine "e" (engines[0]) env: must be an object']],
    ["top-level model and workload", { engines: [{ label: "e", launch: ["x"], port: 1 }], model: { id: "" }, workload: { extra_body: [], chat_template_kwargs: "x" } },
      ["model.id: must be a non-empty string", "workload.extra_body: must be a JSON object", "workload.chat_template_kwargs: must be a JSON object"]],
    ["workload not an object", { engines: [{ label: "e", launch: ["x"], port: 1 }], workload: 1, model: "m" },
      ["workload: must be a JSON object", "model: must be a JSON object"]],
    ["problems in several engines", { engines: [{ label: "a", launch: [], port: 1 }, { label: "b", launch: ["x"] }] },
      ['engine "a" (engines[0]) launch:', 'engine "b" (engines[1]) port:']],
  ];
  for (const [name, value, expected] of cases) {
    test(name, () => {
      const { manifest, problems } = checkManifest(value, "m.json");
      assert.equal(manifest, null);
      const e = errorOf(() => parseManifest(JSON.stringify(value), "/d/m.json"));
      assert.equal(e.code, 65);
      const line = e.oneLine();
      assert.ok(!line.includes("\n"));
      assert.ok(line.startsWith(`ik: /d/m.json: ${problems.length} manifest problem`), line);
      assert.equal(problems.length, expected.length, JSON.stringify(problems));
      for (const want of expected) assert.ok(line.includes(want), `missing "${want}" in: ${line}`);
    });
  }
});

describe("selectEngines (--engines)", () => {
  const specs = parseManifest(JSON.stringify(good), "m.json").engines;
  test("keeps manifest order; empty means all", () => {
    assert.deepEqual(selectEngines(specs, "trtllm, v").map((s) => s.label), ["v", "trtllm"]);
    assert.deepEqual(selectEngines(specs, ["v"]).map((s) => s.label), ["v"]);
    assert.equal(selectEngines(specs, null).length, 3);
    assert.equal(selectEngines(specs, "").length, 3);
  });
  test("an unknown label is a usage error (64) listing the known ones", () => {
    const e = errorOf(() => selectEngines(specs, "v,zz,yy"));
    assert.equal(e.code, 64);
    assert.equal(e.oneLine(), "ik: --engines: unknown labels zz, yy; the manifest has v, llama.cpp-build, trtllm");
    assert.equal(errorOf(() => selectEngines(specs, " , ")).code, 64);
  });
});
