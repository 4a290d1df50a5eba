/**
 * `ik probe` through the compiled binary (IK_BIN), issue 7: `--engine-kind auto` against every
 * `ik mock` personality, a model the server does not serve, the body actually sent in the row,
 * refused --extra-body keys, duration limits, secrets never printed, server text escaped, and the
 * TTY-only wait line (under `script -qfec`). Budget: about 15 s (one 3 s slow-headers request).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { ikBin, type IkProcess, runIk, startArgv, BINARY_ONLY_SUITE } from "../_helpers/ik.ts";
import { runtime } from "../../lib/runtime/mod.ts";
import type { Served } from "../../lib/runtime/mod.ts";

const ESC = "\u001b";
const KEY = "sk-test-SECRET-4242";

async function startMock(args: string[]): Promise<{ proc: IkProcess; url: string }> {
  const proc = startArgv([ikBin()], ["mock", "--port", "0", ...args]);
  const m = await proc.waitFor(/ik mock: listening on (http:\/\/127\.0\.0\.1:\d+)/, 20_000);
  return { proc, url: m[1] };
}

/** A hostile server: echoes the bearer key in a 401, puts escape sequences in its text and model names. */
function hostile(): Promise<Served> {
  return runtime.serve(async (req) => {
    const path = new URL(req.url).pathname;
    if (req.method === "GET" && path === "/v1/models") {
      const key = (req.headers.get("authorization") ?? "").replace(/^Bearer /, "");
      const data = ["auth", "text", "echo", `evil${ESC}[2Jname`, ...(key ? [`owner-${key}`] : [])].map((
        id,
      ) => ({ id, object: "model", owned_by: "system" }));
      return Response.json({ object: "list", data });
    }
    if (req.method !== "POST") return new Response('{"detail":"Not Found"}', { status: 404 });
    const body = await req.json() as { model: string };
    if (body.model === "auth") {
      const key = (req.headers.get("authorization") ?? "").replace(/^Bearer /, "");
      return Response.json({
        error: {
          message: `Incorrect API key provided: ${key}. ${ESC}]0;pwned\u0007${ESC}[2J`,
          type: "auth",
          code: 401,
        },
      }, { status: 401 });
    }
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
      `data: ${
        JSON.stringify({
          id: "c",
          object: "chat.completion.chunk",
          model: "text",
          choices: [{ index: 0, delta, finish_reason: finish }],
        })
      }\n\n`;
    const key = (req.headers.get("authorization") ?? "").replace(/^Bearer /, "");
    const content = body.model === "echo" ? `your key is ${key}` : `${ESC}[31mred\u202e${ESC}]0;t\u0007`;
    const sse = chunk({ role: "assistant", content: "" }) + chunk({ content }) +
      chunk({}, "stop") + "data: [DONE]\n\n";
    return new Response(sse, { headers: { "content-type": "text/event-stream" } });
  }, { port: 0, hostname: "127.0.0.1" });
}

describe("ik probe, issue 7 (compiled binary)", { skip: BINARY_ONLY_SUITE }, () => {
  const mocks: Record<string, string> = {};
  const procs: IkProcess[] = [];
  let evil: Served;
  before(async () => {
    assert.ok(existsSync(ikBin()), `${ikBin()} is missing: build it with scripts/build.sh (or set IK_BIN)`);
    for (const engine of ["vllm", "sglang", "llamacpp", "trtllm", "openai"]) {
      const args = ["--engine", engine, ...(engine === "trtllm" ? [] : [])];
      const m = await startMock(args);
      procs.push(m.proc);
      mocks[engine] = m.url;
    }
    // Headers after 3 s, then 4 tokens 700 ms apart: the line must go when the headers come, not at the end.
    const slow = await startMock(["--engine", "vllm", "--fault", "slow-headers:3", "--tpot-ms", "700"]);
    procs.push(slow.proc);
    mocks.slow = slow.url;
    evil = await hostile();
  });
  after(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    await evil.close();
  });

  const probe = (url: string, extra: string[], env?: Record<string, string>) =>
    runIk(["probe", "--base-url", url, "--model", "mock-model", "--max-tokens", "4", ...extra], {
      timeoutMs: 30_000,
      env,
    });

  test("--engine-kind auto (the default) picks each mock personality's profile", async () => {
    const want: Record<string, [string, string]> = {
      vllm: ["vllm", "owned_by"],
      sglang: ["sglang", "owned_by"],
      llamacpp: ["llamacpp", "owned_by"],
      trtllm: ["trtllm", "owned_by"],
      openai: ["generic", "fallback"],
    };
    for (const [engine, [kind, source]] of Object.entries(want)) {
      const r = await probe(mocks[engine], ["--json"]);
      assert.equal(r.code, 0, `${engine}: ${r.stderr}`);
      const row = JSON.parse(r.stdout);
      assert.deepEqual([row.engine_kind, row.engine_kind_source], [kind, source], engine);
      assert.equal(row.n_tokens, 4, engine);
    }
    const v = JSON.parse((await probe(mocks.vllm, ["--json"])).stdout);
    assert.deepEqual(v.asked, {
      exact_length: ["ignore_eos", "min_tokens"],
      token_ids: { via: "free", fields: ["return_token_ids"] },
    });
    assert.equal(v.token_count_method, "ids");
    const flag = JSON.parse((await probe(mocks.vllm, ["--json", "--engine-kind", "generic"])).stdout);
    assert.deepEqual([flag.engine_kind, flag.engine_kind_source, flag.asked.exact_length], [
      "generic",
      "flag",
      null,
    ]);
    const human = await probe(mocks.llamacpp, []);
    assert.match(human.stdout, /^ik probe: llamacpp profile/);
    assert.match(human.stdout, /engine kind .*owned_by=llamacpp/);
    assert.doesNotMatch(human.stdout, /owned_by: owned_by/, "the evidence once, not its source name and then itself");
  });

  test("a model the server does not list: one line listing the served models, exit 69", async () => {
    const r = await runIk(["probe", "--base-url", mocks.vllm, "--model", "no-such-model"], {
      timeoutMs: 30_000,
    });
    assert.equal(r.code, 69, r.stderr);
    assert.equal(r.stdout, "");
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
    assert.match(r.stderr, /^ik: --model: 'no-such-model' is not served .*'mock-model'/);
  });

  test("the row reports the body sent: --extra-body max_tokens wins over --max-tokens", async () => {
    const r = await probe(mocks.vllm, ["--json", "--extra-body", '{"max_tokens":20}']);
    assert.equal(r.code, 0, r.stderr);
    const row = JSON.parse(r.stdout);
    assert.equal(row.max_tokens, 20);
    assert.equal(row.n_tokens, 20);
  });

  test("--extra-body with __proto__ / constructor / stream:false: usage 64, one line naming flag and key", async () => {
    for (
      const [body, key] of [
        ['{"__proto__":{"x":1}}', "__proto__"],
        ['{"a":[{"constructor":1}]}', "constructor"],
        ['{"stream":false}', "stream"],
      ]
    ) {
      const r = await probe(mocks.vllm, ["--extra-body", body]);
      assert.equal(r.code, 64, body);
      assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
      assert.match(r.stderr, new RegExp(`^ik: --extra-body: key '[^']*${key.replace(/_/g, "_")}'`));
    }
  });

  test("duration flags above 2147483 s: usage 64 naming the flag and the limit, one line", async () => {
    for (const flag of ["--timeout-s", "--idle-timeout-s"]) {
      const r = await probe(mocks.vllm, [flag, "3000000"]);
      assert.equal(r.code, 64, `${flag}: ${r.stderr}`);
      assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
      assert.ok(r.stderr.includes(flag) && /2,?147,?483/.test(r.stderr), r.stderr);
    }
    const ok = await probe(mocks.vllm, ["--json", "--timeout-s", "2147483", "--idle-timeout-s", "2147483"]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(ok.stderr, "");
  });

  test("credentials in --base-url are never echoed, whatever check it fails", async () => {
    for (
      const url of [
        "htp://user:hunter22@h:8000/v1",
        "http://user:hunter22@127.0.0.1:99999/v1",
        "http://user:hunter22@127.0.0.1:8000/v1?api_key=abcd1234",
        "http://127.0.0.1:99999/v1?api_key=abcd1234",
        "user:hunter22@localhost:8000",
      ]
    ) {
      const r = await runIk(["probe", "--base-url", url, "--model", "m"], { timeoutMs: 30_000 });
      assert.equal(r.code, 64, `${url}: ${r.stderr}`);
      const all = r.stdout + r.stderr;
      assert.ok(!all.includes("hunter22") && !all.includes("abcd1234"), all);
      assert.match(r.stderr, /^ik: --base-url: /);
    }
  });

  test("the API key is scrubbed from a 401 that echoes it, in human and JSON output", async () => {
    const url = `http://127.0.0.1:${evil.port}`;
    for (const json of [false, true]) {
      const r = await runIk(
        [
          "probe",
          "--base-url",
          url,
          "--model",
          "auth",
          "--api-key-env",
          "IK_T7_KEY",
          ...(json ? ["--json"] : []),
        ],
        { env: { IK_T7_KEY: KEY }, timeoutMs: 30_000 },
      );
      assert.equal(r.code, 1, r.stderr);
      assert.ok(!(r.stdout + r.stderr).includes(KEY), r.stdout + r.stderr);
      if (json) {
        const row = JSON.parse(r.stdout);
        assert.match(row.error, /Incorrect API key provided: \*\*\*/);
        assert.ok(row.error.includes(ESC), "JSON keeps the server's text exact (escaped by JSON only)");
      } else {
        assert.match(r.stdout, /Incorrect API key provided: \*\*\*/);
        assert.ok(!r.stdout.includes(ESC) && !r.stdout.includes("\u0007"), JSON.stringify(r.stdout));
        assert.ok(r.stdout.includes("\\e]0;pwned"), r.stdout);
      }
    }
  });

  test("escape sequences in generated text and model names are made visible", async () => {
    const url = `http://127.0.0.1:${evil.port}`;
    const r = await runIk(["probe", "--base-url", url, "--model", "text"], { timeoutMs: 30_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.ok(!r.stdout.includes(ESC) && !r.stdout.includes("\u202e"), JSON.stringify(r.stdout));
    assert.match(r.stdout, /text: ".*red\\u202e/);
    const j = JSON.parse(
      (await runIk(["probe", "--base-url", url, "--model", "text", "--json"], { timeoutMs: 30_000 })).stdout,
    );
    assert.equal(j.ok, true);
    const wrong = await runIk(["probe", "--base-url", url, "--model", "nope"], { timeoutMs: 30_000 });
    assert.equal(wrong.code, 69);
    assert.ok(!wrong.stderr.includes(ESC), JSON.stringify(wrong.stderr));
    assert.match(wrong.stderr, /'evil\\e\[2Jname'/);
  });

  test("a base URL naming the route (/v1/chat/completions): the note on stderr, and the probe proceeds", async () => {
    const r = await probe(`${mocks.vllm}/v1/chat/completions`, ["--json"]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /^ik probe: note: .*\/v1\/chat\/completions/);
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
    assert.equal(JSON.parse(r.stdout).ok, true);
  });

  test("the API key is scrubbed from generated text and model lists that echo it", async () => {
    const url = `http://127.0.0.1:${evil.port}`;
    for (const json of [false, true]) {
      const r = await runIk(
        [
          "probe",
          "--base-url",
          url,
          "--model",
          "echo",
          "--api-key-env",
          "IK_T7_KEY",
          ...(json ? ["--json"] : []),
        ],
        { env: { IK_T7_KEY: KEY }, timeoutMs: 30_000 },
      );
      assert.equal(r.code, 0, r.stderr);
      assert.ok(!(r.stdout + r.stderr).includes(KEY), r.stdout);
      if (!json) assert.match(r.stdout, /your key is \*\*\*/);
    }
    // /v1/models echoing the key in a model id: the wrong-model line lists it scrubbed.
    const wrong = await runIk(["probe", "--base-url", url, "--model", "nope", "--api-key-env", "IK_T7_KEY"], {
      env: { IK_T7_KEY: KEY },
      timeoutMs: 30_000,
    });
    assert.equal(wrong.code, 69, wrong.stderr);
    assert.ok(!wrong.stderr.includes(KEY), wrong.stderr);
    assert.match(wrong.stderr, /'owner-\*\*\*'/);
  });

  const hasScript = spawnSync("script", ["--version"]).status === 0;
  test(
    "waiting for headers: a progress line on a TTY after 2 s, erased when headers come; none without a TTY",
    {
      skip: hasScript ? false : "no script(1) here",
    },
    async () => {
      const cmd = `${ikBin()} probe --base-url ${mocks.slow} --model mock-model --max-tokens 4`;
      const tty = spawnSync("script", ["-qfec", cmd, "/dev/null"], {
        encoding: "utf8",
        timeout: 30_000,
        env: { ...runtime.envAll(), NO_COLOR: "1" },
      });
      assert.equal(tty.status, 0, tty.stdout + tty.stderr);
      const out = tty.stdout;
      const line = `waiting for response headers from ${mocks.slow}/v1… 2 s`;
      const at = out.indexOf(line);
      assert.ok(at >= 0, JSON.stringify(out.slice(0, 400)));
      const erase = out.indexOf(`\r${ESC}[K`, at + line.length);
      const table = out.indexOf("ik probe: vllm profile");
      assert.ok(erase > at && erase < table, "the line is erased before the result is printed");
      assert.ok(
        !out.includes("… 4 s") && !out.includes("… 5 s"),
        "erased when the headers arrive (3 s), not at the end (~5 s)",
      );
      const piped = await runIk([
        "probe",
        "--base-url",
        mocks.slow,
        "--model",
        "mock-model",
        "--max-tokens",
        "4",
      ], { timeoutMs: 30_000 });
      assert.equal(piped.code, 0, piped.stderr);
      assert.equal(piped.stderr, "", "nothing on stderr when it is not a terminal");
    },
  );
});
