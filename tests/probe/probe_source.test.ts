/**
 * `ik probe` from source (cli.ts on the runtime running the suite): the CLI wiring of the command
 * (flag parsing, --json reaching the context, exit codes) without the compiled binary.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { ikSourceArgv, runArgv } from "../_helpers/ik.ts";
import { replayServer } from "../client/_replay.ts";

let server: Awaited<ReturnType<typeof replayServer>>;
before(async () => {
  server = await replayServer();
});
after(async () => {
  await server.close();
});

test("cli.ts probe --json: one row, exit 0; the error stream exits 1; a bad URL exits 64", async () => {
  const argv = ikSourceArgv();
  const ok = await runArgv(argv, [
    "probe",
    "--base-url",
    server.url("trtllm/chat-stream.sse") + "/v1/",
    "--model",
    "m",
    "--json",
  ], { timeoutMs: 60_000 });
  assert.equal(ok.code, 0, ok.stderr);
  const row = JSON.parse(ok.stdout);
  assert.equal(row.n_tokens, 9);
  assert.equal(row.token_count_method, "usage");
  const failed = await runArgv(argv, [
    "probe",
    "--base-url",
    server.url("llamacpp/error-stream.sse"),
    "--model",
    "m",
    "--json",
  ], { timeoutMs: 60_000 });
  assert.equal(failed.code, 1, failed.stderr);
  assert.equal(JSON.parse(failed.stdout).error_kind, "protocol");
  const bad = await runArgv(argv, ["probe", "--base-url", "ftp://x", "--model", "m"], { timeoutMs: 60_000 });
  assert.equal(bad.code, 64);
  assert.match(bad.stderr, /^ik: --base-url: /);
});
