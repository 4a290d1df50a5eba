/**
 * The writers route through the scrubber: the JSONL writer, the store (rows, artifacts,
 * evidence.json), a child's log file scrubbed in place, and the command context's stdout/stderr.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, test } from "node:test";
import { JsonlWriter, newEvidenceId, StagedRun } from "../../lib/evidence/mod.ts";
import { clearSecrets, registerSecret } from "../../lib/evidence/scrub.ts";
import { scrubFileInPlace } from "../../lib/evidence/scrub_file.ts";
import { makeContext } from "../../lib/commands/context.ts";
import type { Runtime } from "../../lib/runtime/mod.ts";

const KEY = "sk-CANARY7QxWriters";

afterEach(() => clearSecrets());

async function withDir(fn: (d: string) => Promise<void>): Promise<void> {
  const d = await mkdtemp(join(tmpdir(), "ik-scrubw-"));
  try {
    await fn(d);
  } finally {
    await rm(d, { recursive: true, force: true });
  }
}

describe("writers scrub what they write", () => {
  test("JsonlWriter: secret keys and this run's secret values, workload fields kept", () =>
    withDir(async (d) => {
      registerSecret(KEY);
      const w = await JsonlWriter.open(join(d, "inputs", "load-r5.jsonl"));
      w.write({ seq: 0, body: { model: "m", max_tokens: 4, api_key: "sk-X", messages: [{ role: "user", content: `echo ${KEY}` }] } });
      await w.close();
      const row = JSON.parse(await readFile(join(d, "inputs", "load-r5.jsonl"), "utf8"));
      assert.deepEqual(row, { seq: 0, body: { model: "m", max_tokens: 4, api_key: "***", messages: [{ role: "user", content: "echo ***" }] } });
    }));

  test("StagedRun: journal rows, text artifacts and evidence.json", () =>
    withDir(async (d) => {
      registerSecret(KEY);
      const id = newEvidenceId("serve_benchmark");
      const run = await StagedRun.create(d, id);
      await run.journal({ error: `HTTP 500: you sent Bearer ${KEY}`, token: "t1" });
      await run.write("outputs/x/a.txt", `content ${KEY}\n`);
      const dir = await run.finish({
        evidence_id: id, limitations: [`metrics: HTTP 500: authorization=Bearer ${KEY}`],
        data: { levels: [{ server: { note: `last: ${KEY}` } }] }, request: { args: { argv: ["serve", "--hf-token", "hf_abc1"] } },
      });
      const all = [await readFile(join(dir, "requests.jsonl"), "utf8"), await readFile(join(dir, "outputs/x/a.txt"), "utf8"), await readFile(join(dir, "evidence.json"), "utf8")].join("\n");
      assert.ok(!all.includes(KEY) && !all.includes("hf_abc1") && !all.includes('"t1"'), all);
      assert.match(all, /--hf-token", "\*\*\*"|"--hf-token",\s*"\*\*\*"/);
    }));

  test("scrubFileInPlace: a child's log loses this run's secrets; an unchanged or missing file is left alone", () =>
    withDir(async (d) => {
      registerSecret(KEY);
      const p = join(d, "engine.log");
      await writeFile(p, `env HF_TOKEN=${KEY}\nstarted\n`);
      assert.equal(await scrubFileInPlace(p), true);
      assert.equal(await readFile(p, "utf8"), "env HF_TOKEN=***\nstarted\n");
      assert.equal(await scrubFileInPlace(p), false);
      assert.equal(await scrubFileInPlace(join(d, "missing.log")), false);
    }));

  test("the command context prints through the scrubber", () => {
    registerSecret(KEY);
    const seen: string[] = [];
    const rt = { writeStdout: (t: string) => seen.push(`out:${t}`), writeStderr: (t: string) => seen.push(`err:${t}`), env: () => undefined } as unknown as Runtime;
    const ctx = makeContext(rt, false, new AbortController().signal);
    ctx.out(`server said ${KEY}\n`);
    ctx.err("GET http://h/v1#access_token=abc1 --password pw123\n");
    assert.deepEqual(seen, ["out:server said ***\n", "err:GET http://h/v1#access_token=*** --password ***\n"]);
  });
});
