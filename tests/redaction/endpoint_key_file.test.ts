/**
 * The per-machine endpoint key file (lib/evidence/endpoint_key.ts, CONTRACTS.md "Names"): created
 * whole or not at all, so processes that race to create it all read the same key (never a
 * still-empty file); a key file others can read (0644) is used with one warning naming the path and
 * `chmod 600`.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { spawn } from "node:child_process";
import { chmod, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { loadEndpointKey } from "../../lib/evidence/endpoint_key.ts";

async function withDir(fn: (d: string) => Promise<void>): Promise<void> {
  const d = await mkdtemp(join(tmpdir(), "ik-keyfile-"));
  try {
    await fn(d);
  } finally {
    await rm(d, { recursive: true, force: true });
  }
}

const hex = (k: Uint8Array) => Buffer.from(k).toString("hex");

describe("creating the key file", () => {
  test("16 concurrent loads in one process: one key, every load persistent, no temporary file left", () =>
    withDir(async (d) => {
      for (let round = 0; round < 5; round++) {
        const p = join(d, `r${round}`, "ik", "endpoint.key");
        const keys = await Promise.all(Array.from({ length: 16 }, () => loadEndpointKey(p, { warn: () => {} })));
        assert.deepEqual(keys.map((k) => k.persistent), keys.map(() => true), `round ${round}`);
        assert.equal(new Set(keys.map((k) => hex(k.key))).size, 1);
        assert.equal((await readFile(p, "utf8")).trim(), hex(keys[0].key));
        assert.deepEqual(await readdir(join(d, `r${round}`, "ik")), ["endpoint.key"]);
      }
    }));

  test("6 processes started together: one key, all persistent", () =>
    withDir(async (d) => {
      const p = join(d, "ik", "endpoint.key");
      const mod = fileURLToPath(new URL("../../lib/evidence/endpoint_key.ts", import.meta.url));
      const script = join(d, "load.ts");
      await writeFile(script, `import { Buffer } from "node:buffer";\nimport { loadEndpointKey } from ${JSON.stringify(mod)};\n` +
        "const at = Number(process.argv[3]);\nwhile (Date.now() < at) { /* start together */ }\n" +
        "const k = await loadEndpointKey(process.argv[2]);\nconsole.log(k.persistent ? Buffer.from(k.key).toString('hex') : 'PROCESS-ONLY');\n");
      const g = globalThis as { Deno?: unknown };
      const argv = (at: number) => g.Deno ? ["run", "-A", script, p, String(at)] : [script, p, String(at)];
      const at = Date.now() + 1500;
      const outs = await Promise.all(Array.from({ length: 6 }, () => new Promise<string>((resolve, reject) => {
        const c = spawn(process.execPath, argv(at), { stdio: ["ignore", "pipe", "inherit"] });
        let out = "";
        c.stdout.on("data", (b) => (out += b));
        const t = setTimeout(() => c.kill("SIGKILL"), 30_000);
        c.on("error", reject);
        c.on("close", () => {
          clearTimeout(t);
          resolve(out.trim());
        });
      })));
      assert.ok(outs.every((o) => /^[0-9a-f]{64}$/.test(o)), outs.join(" "));
      assert.equal(new Set(outs).size, 1);
    }));

  test("a key file another process is still writing (empty, then whole) is waited for", () =>
    withDir(async (d) => {
      const p = join(d, "endpoint.key");
      await writeFile(p, "", { mode: 0o600 });
      setTimeout(() => void writeFile(p, "ab".repeat(32) + "\n"), 100);
      const k = await loadEndpointKey(p, { warn: () => {} });
      assert.equal(k.persistent, true);
      assert.equal(hex(k.key), "ab".repeat(32));
    }));
});

describe("a key file others can read", () => {
  test("mode 0644: used, with one warning line naming the path and chmod 600, once per process", () =>
    withDir(async (d) => {
      const p = join(d, "open.key");
      await writeFile(p, "cd".repeat(32) + "\n");
      await chmod(p, 0o644);
      const lines: string[] = [];
      const a = await loadEndpointKey(p, { warn: (l) => lines.push(l) });
      const b = await loadEndpointKey(p, { warn: (l) => lines.push(l) });
      assert.equal(a.persistent && b.persistent, true);
      assert.equal(hex(a.key), "cd".repeat(32));
      assert.equal(lines.length, 1, lines.join("\n"));
      assert.ok(!lines[0].includes("\n"));
      assert.ok(lines[0].includes(p) && lines[0].includes("0644") && lines[0].includes("chmod 600"), lines[0]);
    }));
  test("mode 0600: no warning", () =>
    withDir(async (d) => {
      const p = join(d, "closed.key");
      await writeFile(p, "ef".repeat(32) + "\n", { mode: 0o600 });
      const lines: string[] = [];
      assert.equal((await loadEndpointKey(p, { warn: (l) => lines.push(l) })).persistent, true);
      assert.deepEqual(lines, []);
    }));
});
