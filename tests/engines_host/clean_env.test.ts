/** The engine child's clean environment: basics, manifest env, --pass-env; names recorded, values not. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { IkError } from "../../lib/cli/errors.ts";
import { BASE_ENV_KEYS, cleanEnv } from "../../lib/engines_host/clean_env.ts";

const parent = {
  PATH: "/usr/bin:/bin",
  HOME: "/home/u",
  USER: "u",
  LANG: "C.UTF-8",
  TZ: "UTC",
  OPENAI_API_KEY: "sk-secret",
  CUDA_VISIBLE_DEVICES: "3",
  HF_HOME: "/data/hf",
  HTTPS_PROXY: "http://proxy",
};

test("only the basics that are present, plus the manifest env and --pass-env", () => {
  const r = cleanEnv({ parent, manifestEnv: { CUDA_VISIBLE_DEVICES: "0", VLLM_PORT: 8001, FLAG: true }, passEnv: ["HF_HOME"] });
  assert.deepEqual(r.env, {
    PATH: "/usr/bin:/bin",
    HOME: "/home/u",
    USER: "u",
    LANG: "C.UTF-8",
    TZ: "UTC",
    CUDA_VISIBLE_DEVICES: "0",
    VLLM_PORT: "8001",
    FLAG: "true",
    HF_HOME: "/data/hf",
  });
  assert.deepEqual(r.keys, ["CUDA_VISIBLE_DEVICES", "FLAG", "HF_HOME", "HOME", "LANG", "PATH", "TZ", "USER", "VLLM_PORT"]);
  assert.ok(!("OPENAI_API_KEY" in r.env) && !("HTTPS_PROXY" in r.env), "nothing else leaks through");
  assert.deepEqual(r.missing, []);
  assert.deepEqual(r.notes, []);
  assert.ok(!JSON.stringify(r.keys).includes("/data/hf"), "keys hold names only");
});

test("every basic is copied when set, from a getter too", () => {
  const all = Object.fromEntries(BASE_ENV_KEYS.map((k) => [k, `v-${k}`]));
  const r = cleanEnv({ parent: (n) => all[n] });
  assert.deepEqual(r.keys, [...BASE_ENV_KEYS].sort());
});

test("a missing --pass-env is noted, not passed; an override of the manifest is noted", () => {
  const r = cleanEnv({ parent, manifestEnv: { HF_HOME: "/m" }, passEnv: ["NOPE", "HF_HOME", "NOPE"] });
  assert.deepEqual(r.missing, ["NOPE"]);
  assert.equal(r.env.HF_HOME, "/data/hf");
  assert.ok(!("NOPE" in r.env));
  assert.equal(r.notes.length, 2);
  assert.match(r.notes[0], /--pass-env NOPE: not set/);
  assert.match(r.notes[1], /overrides the manifest's HF_HOME/);
});

test("bad names and values are errors naming the key", () => {
  assert.throws(() => cleanEnv({ parent, passEnv: ["A-B"] }), (e: unknown) => e instanceof IkError && e.code === 64);
  assert.throws(
    () => cleanEnv({ parent, manifestEnv: { X: { a: 1 } }, where: "engines[0].env" }),
    (e: unknown) => e instanceof IkError && e.code === 65 && e.where === "engines[0].env.X",
  );
  assert.throws(() => cleanEnv({ parent, manifestEnv: { "1X": "v" } }), (e: unknown) => e instanceof IkError && e.code === 65);
});
