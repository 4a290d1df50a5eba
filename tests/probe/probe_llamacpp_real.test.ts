/**
 * `ik probe --engine-kind auto` against the real llama.cpp server in ../shared/engines/llama.cpp
 * (build 10587, tiny model): it must choose the llamacpp profile, and a wrong model must list the
 * served alias. Bun only (a real engine: CONTRACTS.md "Platform and CI"); skipped where the server
 * cannot run. Budget: about 2 s (startup ~0.2 s, two 8-token requests).
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { runtime } from "../../lib/runtime/mod.ts";
import { ROOT, runIk } from "../_helpers/ik.ts";
import { closedPort } from "../client/_raw_server.ts";

const DIR = join(ROOT, "..", "shared", "engines", "llama.cpp");
const SERVER = join(DIR, "llama-server");

function whyNot(): string | false {
  if (runtime.name !== "bun") return "real-engine tests run under Bun only";
  if (!existsSync(SERVER)) return `${SERVER} is missing`;
  const v = spawnSync(SERVER, ["--version"], { timeout: 10_000 });
  return v.status === 0
    ? false
    : `llama-server does not run here (${v.error?.message ?? `exit ${v.status}`})`;
}

const skip = whyNot();

describe("ik probe against a real llama-server", { skip }, () => {
  let child: ChildProcess;
  let url = "";
  before(async () => {
    const port = await closedPort();
    url = `http://127.0.0.1:${port}`;
    child = spawn(SERVER, [
      "-m",
      join(DIR, "tiny.gguf"),
      "--alias",
      "tiny-llama",
      "--host",
      "127.0.0.1",
      "--port",
      String(port),
      "-c",
      "2048",
      "-np",
      "1",
      "-t",
      "1",
      "--metrics",
      "--no-webui",
    ], { stdio: "ignore" });
    const deadline = Date.now() + 20_000;
    for (;;) {
      const ok = await fetch(`${url}/health`, { signal: AbortSignal.timeout(1000) }).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) break;
      assert.ok(
        Date.now() < deadline && child.exitCode === null,
        "llama-server did not become ready in 20 s",
      );
      await new Promise((r) => setTimeout(r, 100));
    }
  });
  after(() => {
    if (child && child.exitCode === null) child.kill("SIGTERM");
  });

  test("a bare probe chooses llamacpp from owned_by and gets exactly max_tokens", async () => {
    const r = await runIk([
      "probe",
      "--base-url",
      url,
      "--model",
      "tiny-llama",
      "--max-tokens",
      "8",
      "--json",
    ], {
      timeoutMs: 30_000,
    });
    assert.equal(r.code, 0, r.stderr);
    const row = JSON.parse(r.stdout);
    assert.deepEqual([row.engine_kind, row.engine_kind_source, row.engine_kind_detail], [
      "llamacpp",
      "owned_by",
      "owned_by=llamacpp",
    ]);
    assert.deepEqual(row.asked.exact_length, ["ignore_eos"]);
    assert.equal(row.n_tokens, 8);
  });

  test("a model it does not serve: exit 69, the line lists tiny-llama", async () => {
    const r = await runIk(["probe", "--base-url", url, "--model", "gpt-4o"], { timeoutMs: 30_000 });
    assert.equal(r.code, 69, r.stderr);
    assert.match(r.stderr, /^ik: --model: 'gpt-4o' is not served .*'tiny-llama'/);
  });
});

if (skip) test("real llama-server probe (skipped)", { skip }, () => {});
