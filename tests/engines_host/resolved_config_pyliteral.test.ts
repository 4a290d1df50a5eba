/** The Python-literal reader behind parseResolvedConfig: literals → JSON, garbage → ok: false, never a throw. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { parseKwargList, rawScalar } from "../../lib/engines_host/resolved_config_kwargs.ts";
import {
  MAX_LITERAL_CHARS,
  MAX_LITERAL_DEPTH,
  parsePyLiteral,
  parsePyValue,
} from "../../lib/engines_host/resolved_config_pyliteral.ts";

const v = (s: string) => {
  const r = parsePyValue(s);
  assert.ok(r.ok, `should read: ${s}`);
  return r.value;
};

test("scalars: numbers, constants, bare and dotted names", () => {
  assert.equal(v("256"), 256);
  assert.equal(v("-0.9"), -0.9);
  assert.equal(v("1_000"), 1000);
  assert.equal(v("0x1F"), 31);
  assert.equal(v("0o17"), 15);
  assert.equal(v("0b101"), 5);
  assert.equal(v("1e3"), 1000);
  assert.equal(v("123456789012345678901"), "123456789012345678901", "beyond 2^53 stays exact text");
  assert.equal(v("2j"), "2j");
  assert.equal(v("True"), true);
  assert.equal(v("False"), false);
  assert.equal(v("None"), null);
  assert.equal(v("true"), true, "JSON spellings too (vLLM prints JSON inside compilation_config)");
  assert.equal(v("auto"), "auto");
  assert.equal(v("torch.bfloat16"), "torch.bfloat16");
  assert.equal(v("-inf"), "-inf");
  assert.equal(v("..."), "...");
  assert.equal(v("<LoadFormat.AUTO: 'auto'>"), "<LoadFormat.AUTO: 'auto'>");
});

test("strings: both quotes, escapes, prefixes, triple quotes, concatenation", () => {
  assert.equal(v(`'it\\'s'`), "it's");
  assert.equal(v(`"say \\"hi\\""`), 'say "hi"');
  assert.equal(v(`'a\\nb\\tc\\\\d'`), "a\nb\tc\\d");
  assert.equal(v(`'\\x41\\u00e9\\U0001F600\\101'`), "Aé😀A");
  assert.equal(v(`r'C:\\new'`), "C:\\new", "raw strings keep backslashes");
  assert.equal(v(`b'bytes'`), "bytes");
  assert.equal(v(`'''x'y'''`), "x'y");
  assert.equal(v(`'ab' "cd"`), "abcd");
  assert.equal(v(`"{'not': 'a dict'}"`), "{'not': 'a dict'}");
  assert.equal(v(`'\\q'`), "\\q", "unknown escapes are kept, as Python does");
});

test("containers: dict, list, tuple, set, nesting", () => {
  assert.deepEqual(v(`{'a': 1, "b": [1, (2, 3), {'c': None}], 3: True,}`), {
    a: 1,
    b: [1, [2, 3], { c: null }],
    "3": true,
  });
  assert.deepEqual(v("()"), []);
  assert.deepEqual(v("(1,)"), [1]);
  assert.equal(v("(1)"), 1);
  assert.deepEqual(v("{1, 2}"), [1, 2]);
  assert.deepEqual(v("{}"), {});
  const o = v(`{'__proto__': {'polluted': 1}}`) as Record<string, unknown>;
  assert.deepEqual(Object.keys(o), ["__proto__"]);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});

test("calls: keyword arguments become objects, nested calls too", () => {
  assert.deepEqual(v("ServerArgs(model_path='m', tp_size=1, spec=SomeConfig(a=1, b=[1]))"), {
    model_path: "m",
    tp_size: 1,
    spec: { a: 1, b: [1] },
  });
  assert.equal(v("PosixPath('/tmp/x')"), "/tmp/x");
  assert.deepEqual(v("f(1, 2)"), [1, 2]);
  assert.deepEqual(v("f(1, k=2)"), { k: 2, _args: [1] });
  assert.deepEqual(v("set()"), {});
  assert.deepEqual(v("Cfg(a = 1)"), { a: 1 });
  assert.equal(parsePyValue("Cfg(a=1, b=x == y)").ok, false, "a comparison is not a literal");
});

test("garbage never throws and is refused", () => {
  const bad = [
    "", "{", "[1, 2", "{'a' 1}", "'unterminated", "ServerArgs(a=", "{1: 2, 3}", "@", ")", "'a\nb'",
    "[".repeat(MAX_LITERAL_DEPTH + 1) + "]".repeat(MAX_LITERAL_DEPTH + 1), "1 2", "{'a': 1}}",
  ];
  for (const s of bad) assert.equal(parsePyValue(s).ok, false, JSON.stringify(s));
  assert.equal(parsePyValue("[".repeat(100_000)).ok, false);
  assert.equal(parsePyLiteral("x".repeat(MAX_LITERAL_CHARS + 1)).ok, false, "size cap");
  assert.equal(parsePyValue(null as unknown as string).ok, false);
  const deep = "[".repeat(MAX_LITERAL_DEPTH) + "]".repeat(MAX_LITERAL_DEPTH);
  assert.equal(parsePyValue(deep).ok, true, "the depth limit itself is allowed");
  for (let i = 0; i < 300; i++) {
    let s = "";
    for (let j = 0; j < 40; j++) s += "{}[]()'\",:=\\ aZ09._-<>\n"[(i * 7919 + j * 104729) % 24];
    assert.doesNotThrow(() => parsePyValue(s));
    assert.doesNotThrow(() => parseKwargList(s));
  }
});

test("parsePyLiteral reports where the literal ends", () => {
  const r = parsePyLiteral("x = {'a': 1} trailing", 4);
  assert.deepEqual(r, { ok: true, value: { a: 1 }, end: 12 });
});

test("lenient key=value lists (vLLM engine config, TensorRT-LLM)", () => {
  const kw = parseKwargList(
    "model='Qwen/Q', speculative_config=None, tokenizer_mode=auto, dtype=torch.bfloat16, max_seq_len=32768, " +
      "served_model_name=Qwen/Qwen2.5-0.5B-Instruct, compilation_config={\"level\":3,\"x\":[1,2]}, " +
      "spec=SpeculativeConfig(method='ngram', n=3), available_gpu_mem=16.25 GB, enable_prefix_caching=True",
  );
  assert.equal(kw.complete, true);
  assert.deepEqual(kw.values, {
    model: "Qwen/Q",
    speculative_config: null,
    tokenizer_mode: "auto",
    dtype: "torch.bfloat16",
    max_seq_len: 32768,
    served_model_name: "Qwen/Qwen2.5-0.5B-Instruct",
    compilation_config: { level: 3, x: [1, 2] },
    spec: { method: "ngram", n: 3 },
    available_gpu_mem: "16.25 GB",
    enable_prefix_caching: true,
  });
  assert.deepEqual(parseKwargList("a=1, then prose").complete, false);
  assert.deepEqual(parseKwargList("a=(1, b=2"), { values: { a: "(1, b=2" }, complete: false }, "unbalanced: runs to the end, incomplete");
  assert.equal(rawScalar(" 42 "), 42);
  assert.equal(rawScalar("None"), null);
  assert.equal(rawScalar("4 GB"), "4 GB");
});
